-- Steps per day over the last 30 days, with the source that won each day.
--
-- Question:   How many steps did I take each day, and which device counted them?
-- Views:      health.daily_totals, health.today
-- Parameters: person  whose data (default: default, the person when no token was minted)
--             days    days back from the person's today, today included (default: 30)
-- Run:        psql -X -v person=me -f sql/steps_last_30_days.sql
-- Reading it: a day's steps are one source's total (the largest), never phone + watch added
--             up; alternatives holds the other sources' totals. A day without a row had no
--             data, which is not zero steps. Today is still counting (is_partial).
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
SELECT t.day,
       round(t.value)::bigint AS steps,
       t.source AS winning_source,
       t.alternatives,
       t.is_partial
FROM health.daily_totals t
JOIN params p ON p.person = t.person
WHERE t.metric = 'steps'
  AND t.day > p.today - p.days
ORDER BY t.day;
