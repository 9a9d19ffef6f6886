-- Body weight per day measured, with a 7-day mean and the change since the first day shown.
--
-- Question:   Where is my weight heading?
-- Views:      health.daily_body, health.daily_summary, health.today
-- Parameters: person  whose data (default: default)
--             days    days back from the person's today, today included (default: 90)
-- Run:        psql -X -v person=me -f sql/weight_trend.sql
-- Reading it: kg is the day's latest weighing (by its start time), from any scale or app.
--             mean_7d averages the complete days weighed among the 7 calendar days ending that
--             day (today is left out until it is over); change_kg is against the first
--             weighing in the period.
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
weighed AS (
  SELECT b.day, b.value AS kg, b.measured_at, b.source, d.is_partial
  FROM health.daily_body b
  JOIN params p ON p.person = b.person
  JOIN health.daily_summary d ON d.person = b.person AND d.day = b.day
  WHERE b.metric = 'body_mass_kg'
    AND b.day > p.today - p.days - 6
),
rolling AS (
  SELECT w.*,
         avg(w.kg) FILTER (WHERE NOT w.is_partial) OVER r AS mean_7d
  FROM weighed w
  WINDOW r AS (ORDER BY w.day RANGE BETWEEN interval '6 days' PRECEDING AND CURRENT ROW)
),
shown AS (
  SELECT r.* FROM rolling r JOIN params p ON r.day > p.today - p.days
)
SELECT s.day,
       round(s.kg::numeric, 2) AS kg,
       round(s.mean_7d::numeric, 2) AS mean_7d,
       round((s.kg - first_value(s.kg) OVER (ORDER BY s.day))::numeric, 2) AS change_kg,
       s.measured_at,
       s.source,
       s.is_partial
FROM shown s
ORDER BY s.day;
