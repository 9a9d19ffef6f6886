-- Heart rate variability (SDNN) per day with its 7-day rolling mean.
--
-- Question:   How is my HRV trending, smoothed over a week?
-- Views:      health.daily_readings, health.today
-- Parameters: person  whose data (default: default)
--             days    days back from the person's today, today included (default: 90)
-- Run:        psql -X -v person=me -f sql/hrv_rolling_mean.sql
-- Reading it: hrv_ms is the mean of the day's SDNN readings in milliseconds, across sources;
--             mean_7d averages the complete days among the 7 calendar days ending that day,
--             leaving today (partial) and days without readings out.
\if :{?person}
\else
\set person default
\endif
\if :{?days}
\else
\set days 90
\endif

WITH params AS MATERIALIZED (  -- today is read first, alone: on Citus not from a shard (docs/scaling.md)
  SELECT :'person'::text AS person,
         (:'days')::int AS days,
         health.today(:'person') AS today
),
daily AS (
  SELECT r.day, r.mean AS ms, r.samples, r.is_partial
  FROM health.daily_readings r
  JOIN params p ON p.person = r.person
  WHERE r.metric = 'hrv_sdnn_ms'
    AND r.day > p.today - p.days - 6
),
rolling AS (
  SELECT d.day, d.ms, d.samples, d.is_partial,
         avg(d.ms) FILTER (WHERE NOT d.is_partial) OVER w AS mean_7d,
         count(*) FILTER (WHERE NOT d.is_partial) OVER w AS days_in_mean
  FROM daily d
  WINDOW w AS (ORDER BY d.day RANGE BETWEEN interval '6 days' PRECEDING AND CURRENT ROW)
)
SELECT r.day,
       round(r.ms::numeric, 1) AS hrv_ms,
       r.samples,
       round(r.mean_7d::numeric, 1) AS mean_7d,
       r.days_in_mean,
       r.is_partial
FROM rolling r
JOIN params p ON r.day > p.today - p.days
ORDER BY r.day;
