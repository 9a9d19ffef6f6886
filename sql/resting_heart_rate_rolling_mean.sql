-- Resting heart rate per day with its 7-day rolling mean.
--
-- Question:   Is my resting heart rate drifting up or down?
-- Views:      health.daily_readings, health.today
-- Parameters: person  whose data (default: default)
--             days    days back from the person's today, today included (default: 90)
-- Run:        psql -X -v person=me -f sql/resting_heart_rate_rolling_mean.sql
-- Reading it: resting_bpm is the day's mean reading (beats per minute). mean_7d averages the
--             complete days among the 7 calendar days ending that day (a gap is not a zero
--             and today, still partial, is left out); days_in_mean says how many there were.
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
  -- Six days more than shown, so the first days' means are complete.
  SELECT r.day, r.mean AS bpm, r.is_partial
  FROM health.daily_readings r
  JOIN params p ON p.person = r.person
  WHERE r.metric = 'resting_heart_rate_bpm'
    AND r.day > p.today - p.days - 6
),
rolling AS (
  SELECT d.day, d.bpm, d.is_partial,
         avg(d.bpm) FILTER (WHERE NOT d.is_partial) OVER w AS mean_7d,
         count(*) FILTER (WHERE NOT d.is_partial) OVER w AS days_in_mean
  FROM daily d
  WINDOW w AS (ORDER BY d.day RANGE BETWEEN interval '6 days' PRECEDING AND CURRENT ROW)
)
SELECT r.day,
       round(r.bpm::numeric, 1) AS resting_bpm,
       round(r.mean_7d::numeric, 1) AS mean_7d,
       r.days_in_mean,
       r.is_partial
FROM rolling r
JOIN params p ON r.day > p.today - p.days
ORDER BY r.day;
