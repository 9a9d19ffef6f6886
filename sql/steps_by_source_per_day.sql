-- Steps per day and source: phone against watch (and any other app that counts steps).
--
-- Question:   What did each device count each day, and which one won?
-- Views:      health.daily_source_totals, health.today
-- Parameters: person  whose data (default: default)
--             days    days back from the person's today, today included (default: 14)
-- Run:        psql -X -v person=me -v days=14 -f sql/steps_by_source_per_day.sql
-- Reading it: one row per day and source, winner first (rank 1). A phone in a pocket and a
--             watch on the wrist count the same walk: the winner's total is the day's value,
--             and naive_sum shows what adding the sources up would have claimed.
\if :{?person}
\else
\set person default
\endif
\if :{?days}
\else
\set days 14
\endif

WITH params AS MATERIALIZED (  -- today is read first, alone: on Citus not from a shard (docs/scaling.md)
  SELECT :'person'::text AS person,
         (:'days')::int AS days,
         health.today(:'person') AS today
)
SELECT s.day,
       s.rank,
       s.source,
       round(s.total)::bigint AS steps,
       s.samples,
       s.is_winner,
       round((100 * s.total / nullif(max(s.total) FILTER (WHERE s.is_winner) OVER (PARTITION BY s.day), 0))::numeric, 1) AS pct_of_winner,
       round(sum(s.total) OVER (PARTITION BY s.day))::bigint AS naive_sum,
       s.is_partial
FROM health.daily_source_totals s
JOIN params p ON p.person = s.person
WHERE s.metric = 'steps'
  AND s.day > p.today - p.days
ORDER BY s.day, s.rank;
