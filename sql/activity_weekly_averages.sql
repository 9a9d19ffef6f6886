-- Weekly averages of the main daily metrics, leaving partial days out.
--
-- Question:   What was a typical day like, week by week?
-- Views:      health.daily_summary, health.today
-- Parameters: person  whose data (default: default)
--             weeks   weeks back, the current one included (default: 12)
-- Run:        psql -X -v person=me -v weeks=8 -f sql/activity_weekly_averages.sql
-- Reading it: weeks start on Monday. Today is not over, so it is left out (is_partial);
--             each average is over the days that had that metric (no data is not zero),
--             and full_days says how many days the week had data at all.
\if :{?person}
\else
\set person default
\endif
\if :{?weeks}
\else
\set weeks 12
\endif

WITH params AS MATERIALIZED (  -- today is read first, alone: on Citus not from a shard (docs/scaling.md)
  SELECT :'person'::text AS person,
         (:'weeks')::int AS weeks,
         health.today(:'person') AS today
)
SELECT date_trunc('week', d.day)::date AS week,
       count(*) AS full_days,
       round(avg(d.steps))::bigint AS steps_avg,
       round(avg(d.active_energy_kcal))::bigint AS active_energy_kcal_avg,
       round(avg(d.exercise_min))::bigint AS exercise_min_avg,
       round((avg(d.sleep_min) / 60)::numeric, 1) AS sleep_h_avg,
       round(avg(d.resting_heart_rate)::numeric, 1) AS resting_heart_rate_avg,
       round(avg(d.hrv_sdnn_ms)::numeric, 1) AS hrv_sdnn_ms_avg,
       sum(d.workouts) AS workouts
FROM health.daily_summary d
JOIN params p ON p.person = d.person
WHERE NOT d.is_partial
  AND d.day >= date_trunc('week', p.today)::date - 7 * (p.weeks - 1)
GROUP BY 1
ORDER BY 1;
