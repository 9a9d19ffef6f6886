-- Heart rate per day: lowest, mean and highest reading.
--
-- Question:   What range did my heart rate cover each day?
-- Views:      health.daily_readings, health.today
-- Parameters: person  whose data (default: default)
--             days    days back from the person's today, today included (default: 30)
-- Run:        psql -X -v person=me -f sql/heart_rate_daily_range.sql
-- Reading it: beats per minute, across every source (readings are never per-source
--             winners). Workouts show up in max_bpm: heart rate during a workout arrives as
--             ordinary readings. samples is how many readings the day had.
\if :{?person}
\else
\set person default
\endif
\if :{?days}
\else
\set days 30
\endif

WITH params AS MATERIALIZED (  -- today is read first, alone: on Citus not from a shard (docs/scaling.md)
  SELECT :'person'::text AS person,
         (:'days')::int AS days,
         health.today(:'person') AS today
)
SELECT r.day,
       round(r.min::numeric, 1) AS min_bpm,
       round(r.mean::numeric, 1) AS mean_bpm,
       round(r.max::numeric, 1) AS max_bpm,
       r.samples,
       r.is_partial
FROM health.daily_readings r
JOIN params p ON p.person = r.person
WHERE r.metric = 'heart_rate_bpm'
  AND r.day > p.today - p.days
ORDER BY r.day;
