-- Days where the warehouse's totals and HealthKit's own differ.
--
-- Question:   On which days does a day total here differ from HealthKit's merged statistic
--             by more than a few percent, and by how much?
-- Views:      health.daily_healthkit_check, health.today
-- Parameters: person  whose data (default: default)
--             pct     the tolerance in percent of HealthKit's value (default: 5)
--             days    days back from the person's today, today included (default: 90)
-- Run:        psql -X -v person=me -f sql/healthkit_check_differences.sql
-- Reading it: warehouse_value is one source's total, the day's winner (never phone + watch
--             added up); healthkit_value is HealthKit's own daily total from a Stridee wellness
--             push, which fills one device's gaps with another's. The warehouse is lower on
--             days one device missed what the other recorded (a watch charging all morning),
--             and either may be off when samples are missing (an export not yet run, a source
--             the app was not allowed to read). difference = warehouse − HealthKit.
\if :{?person}
\else
\set person default
\endif
\if :{?pct}
\else
\set pct 5
\endif
\if :{?days}
\else
\set days 90
\endif

WITH params AS MATERIALIZED (  -- today is read first, alone: on Citus not from a shard (docs/scaling.md)
  SELECT :'person'::text AS person,
         (:'pct')::float8 AS pct,
         (:'days')::int AS days,
         health.today(:'person') AS today
)
SELECT c.day,
       c.metric,
       round(c.warehouse_value::numeric, 1) AS warehouse_value,
       round(c.healthkit_value::numeric, 1) AS healthkit_value,
       round(c.difference::numeric, 1) AS difference,
       round((100 * c.difference / c.healthkit_value)::numeric, 1) AS difference_pct
FROM health.daily_healthkit_check c
JOIN params p ON p.person = c.person
WHERE c.day > p.today - p.days
  AND c.healthkit_value <> 0
  AND abs(c.difference) > p.pct / 100 * abs(c.healthkit_value)
ORDER BY c.day, c.metric COLLATE "C";
