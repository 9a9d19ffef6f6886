-- Time above a heart rate, per workout.
--
-- Question:   In each workout, how long was my heart rate at or above a threshold?
-- Views:      health.workouts, health.workout_streams, health.today
-- Parameters: person  whose data (default: default)
--             bpm     the threshold in beats per minute (default: 150)
--             days    days back from the person's today, today included (default: 30)
-- Run:        psql -X -v person=me -v bpm=160 -f sql/heart_rate_time_above.sql
-- Reading it: from the heart-rate stream a Stridee body sent with the workout (healthd sends
--             none): each sample holds until the next one, so minutes_above adds the spans of
--             the samples at or above bpm, and stream_min is the span from the first sample to
--             the last. Workouts without a stream are left out.
\if :{?person}
\else
\set person default
\endif
\if :{?bpm}
\else
\set bpm 150
\endif
\if :{?days}
\else
\set days 30
\endif

WITH params AS MATERIALIZED (  -- today is read first, alone: on Citus not from a shard (docs/scaling.md)
  SELECT :'person'::text AS person,
         (:'bpm')::float8 AS bpm,
         (:'days')::int AS days,
         health.today(:'person') AS today
),
workouts AS (
  SELECT w.person, w.uuid, w.day, w.start_at, w.activity_name
  FROM health.workouts w
  JOIN params p ON p.person = w.person
  WHERE w.day > p.today - p.days
),
spans AS (
  SELECT s.uuid, s.value,
         extract(epoch FROM lead(s.t) OVER (PARTITION BY s.uuid ORDER BY s.t) - s.t)::float8 / 60 AS minutes
  FROM health.workout_streams s
  JOIN workouts w ON w.person = s.person AND w.uuid = s.uuid
  WHERE s.stream = 'heart_rate'
)
SELECT w.day,
       w.start_at,
       w.activity_name,
       w.uuid,
       count(*) AS samples,
       round(coalesce(sum(s.minutes), 0)::numeric, 1) AS stream_min,
       round(coalesce(sum(s.minutes) FILTER (WHERE s.value >= p.bpm), 0)::numeric, 1) AS minutes_above,
       round((100 * coalesce(sum(s.minutes) FILTER (WHERE s.value >= p.bpm), 0) / nullif(sum(s.minutes), 0))::numeric, 1) AS pct_above,
       max(s.value) AS max_bpm
FROM workouts w
JOIN spans s ON s.uuid = w.uuid
CROSS JOIN params p
GROUP BY w.day, w.start_at, w.activity_name, w.uuid
ORDER BY w.start_at;
