-- Workouts whose time overlaps another workout: usually one session recorded by two apps.
--
-- Question:   Which sessions were recorded twice (watch and a running app, say)?
-- Views:      health.workouts, health.today
-- Parameters: person  whose data (default: default)
--             days    days back from the person's today, today included (default: 90)
-- Run:        psql -X -v person=me -f sql/workouts_overlapping.sql
-- Reading it: both copies are kept and both count in the weekly numbers; nothing is merged
--             silently. overlapping lists the uuids of the other workouts that overlap this
--             one. Remove one source in the app that records twice if it bothers you.
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
)
SELECT w.day,
       w.start_at,
       w.end_at,
       w.activity_name,
       w.source,
       round((w.duration_s / 60)::numeric, 1) AS minutes,
       round((w.distance_m / 1000)::numeric, 2) AS distance_km,
       w.uuid,
       w.overlapping
FROM health.workouts w
JOIN params p ON p.person = w.person
WHERE cardinality(w.overlapping) > 0
  AND w.day > p.today - p.days
ORDER BY w.start_at, w.source COLLATE "C";
