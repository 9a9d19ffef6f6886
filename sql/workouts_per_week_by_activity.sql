-- Workouts per week, by activity.
--
-- Question:   How often did I train each week, and at what?
-- Views:      health.workouts, health.today
-- Parameters: person  whose data (default: default)
--             weeks   weeks back, the current one included (default: 12)
-- Run:        psql -X -v person=me -f sql/workouts_per_week_by_activity.sql
-- Reading it: weeks start on Monday, in the person's local days. Each workout counts once,
--             but one session recorded by two apps is two workouts (see
--             workouts_overlapping.sql): the store never merges them. distance_km and
--             energy_kcal add up only the workouts that recorded them (NULL when none did).
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
SELECT date_trunc('week', w.day)::date AS week,
       w.activity_name,
       count(*) AS workouts,
       round((sum(w.duration_s) / 60)::numeric) AS minutes,
       round((sum(w.distance_m) / 1000)::numeric, 1) AS distance_km,
       round(sum(w.energy_kcal)::numeric) AS energy_kcal
FROM health.workouts w
JOIN params p ON p.person = w.person
WHERE w.day >= date_trunc('week', p.today)::date - 7 * (p.weeks - 1)
GROUP BY 1, 2
ORDER BY 1, 3 DESC, w.activity_name COLLATE "C";
