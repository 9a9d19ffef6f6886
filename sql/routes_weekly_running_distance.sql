-- Weekly running distance, measured along the GPS routes.
--
-- Question:   How far did I run each week, by the routes my watch recorded?
-- Views:      health.workouts, health.workout_routes, health.today
-- Parameters: person  whose data (default: default)
--             weeks   weeks back, the current one included (default: 12)
-- Run:        psql -X -v person=me -f sql/routes_weekly_running_distance.sql
-- Reading it: a run is a workout whose Stridee discipline is RUNNING or whose activity is
--             running. route_km adds the length of each run's GPS route (haversine over its
--             points, health.workout_routes: the routes come with Stridee bodies), recorded_km
--             the distance the workouts themselves recorded; a run without a route counts in
--             runs and recorded_km only. Weeks start on Monday, in the person's local days.
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
),
runs AS (
  SELECT w.day, w.duration_s, w.distance_m, r.distance_m AS route_m, r.elevation_gain_m
  FROM health.workouts w
  JOIN params p ON p.person = w.person
  LEFT JOIN health.workout_routes r ON r.person = w.person AND r.uuid = w.uuid
  WHERE (w.server_type = 'RUNNING' OR w.activity_name = 'running')
    AND w.day >= date_trunc('week', p.today)::date - 7 * (p.weeks - 1)
)
SELECT date_trunc('week', day)::date AS week,
       count(*) AS runs,
       count(route_m) AS runs_with_route,
       round((sum(route_m) / 1000)::numeric, 2) AS route_km,
       round((sum(distance_m) / 1000)::numeric, 2) AS recorded_km,
       round(sum(elevation_gain_m)::numeric) AS elevation_gain_m,
       round((sum(duration_s) / 60)::numeric) AS minutes
FROM runs
GROUP BY 1
ORDER BY 1;
