-- The last seven days at a glance: one row per day with the main metrics side by side.
--
-- Question:   How did my last week look?
-- Views:      health.daily_summary, health.today
-- Parameters: person  whose data (default: default)
-- Run:        psql -X -v person=me -f sql/summary_last_7_days.sql
-- Reading it: totals are the winning source's (never devices added up), readings the day's
--             mean, weight the day's latest; an empty cell is no data, not zero. Today's row
--             is partial and still growing.
\if :{?person}
\else
\set person default
\endif

WITH params AS MATERIALIZED (  -- today is read first, alone: on Citus not from a shard (docs/scaling.md)
  SELECT :'person'::text AS person,
         health.today(:'person') AS today
)
SELECT d.day,
       d.is_partial,
       round(d.steps)::bigint AS steps,
       round(d.active_energy_kcal)::bigint AS active_energy_kcal,
       round(d.exercise_min)::bigint AS exercise_min,
       round((d.sleep_min / 60)::numeric, 1) AS sleep_h,
       round(d.resting_heart_rate::numeric, 1) AS resting_heart_rate,
       round(d.hrv_sdnn_ms::numeric, 1) AS hrv_sdnn_ms,
       round(d.body_mass_kg::numeric, 1) AS body_mass_kg,
       d.workouts,
       d.unknown_samples
FROM health.daily_summary d
JOIN params p ON p.person = d.person
WHERE d.day > p.today - 7
ORDER BY d.day;
