-- Sleep stages per night, counted on the morning of waking.
--
-- Question:   How long did I sleep each night, and in which stages?
-- Views:      health.daily_sleep, health.today
-- Parameters: person  whose data (default: default)
--             days    nights back from the person's today, last night included (default: 30)
-- Run:        psql -X -v person=me -f sql/sleep_stages_per_night.sql
-- Reading it: night_ending is the local date of waking. Asleep = core + deep + REM +
--             unspecified; in bed and awake are not sleep; unknown_min is a stage this app
--             version has no name for. Every minute column is the winning source's.
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
SELECT s.day AS night_ending,
       s.source,
       round((s.asleep_min / 60)::numeric, 2) AS asleep_h,
       round(s.core_min::numeric, 1) AS core_min,
       round(s.deep_min::numeric, 1) AS deep_min,
       round(s.rem_min::numeric, 1) AS rem_min,
       round(s.unspecified_min::numeric, 1) AS unspecified_min,
       round(s.awake_min::numeric, 1) AS awake_min,
       round(s.in_bed_min::numeric, 1) AS in_bed_min,
       round(s.unknown_min::numeric, 1) AS unknown_min,
       s.alternatives,
       s.is_partial
FROM health.daily_sleep s
JOIN params p ON p.person = s.person
WHERE s.day > p.today - p.days
ORDER BY s.day;
