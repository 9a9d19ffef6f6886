-- Rollup level 1: per person, type, local day and source, the aggregates of the samples held
-- (table health_store.rollup_source, migrations 0010 and 0021).
--
--   health_store.samples          one row per sample held
--     └ rollup_source             per person, type, day, source: counts, sums, stages, ranks
--         └ rollup_day_type       per person, type, day: the day value by the type's rule
--             └ rollup_day        per person, day: the daily_summary row
--
-- source_rollup is the one definition of a level-1 row, made from a set of one key's
-- samples; calc_source applies it to every key's samples held, and a batch applies it to the
-- samples it added and merges the result into the stored row (merge_source_rollups).
--
-- Rows are built by column name (to_jsonb of a named row, then jsonb_populate_record of the
-- table's type), never by position: adding a column to rollup_source means adding its
-- aggregate here and its merge rule below, in any order.
--
-- Sums are exact: each value counts as the decimal PostgreSQL's float8-to-numeric cast makes
-- of it (15 significant digits), added without rounding, so a sum does not depend on the
-- order rows are read in, sums of two sets add up to the sum of both, and a recompute equals
-- the stored rollup to the last digit. Values below 10^9 with at most six decimals (nearly
-- all) are added as whole micro-units in bigint, the exact same decimal and far cheaper than
-- the cast; the rest as numeric.
--
-- Repeatable file (docs/architecture.md, "Schema layout").

-- A level-1 key's total by its rule: the exact sum of value (total) or minutes asleep (sleep).
CREATE OR REPLACE FUNCTION health_store.source_total(p_rule text, p_sum_value numeric, p_asleep_s numeric)
RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE p_rule WHEN 'total' THEN p_sum_value WHEN 'sleep' THEN p_asleep_s / 60 END;

COMMENT ON FUNCTION health_store.source_total(text, numeric, numeric) IS
  'A level-1 total by rule: the exact sum of value (total) or the minutes asleep (sleep); NULL for other rules.';

-- Level 1 of one key from a set of its samples; no row for an empty set. One pass over the
-- samples gives every aggregate; what only some rules need (sleep stages, workout sums) is
-- filtered by the rule, so other rules pay nothing for it, and the latest sample is looked up
-- only for rule latest. rank is left NULL: level 2 sets it. A SQL function without SET
-- clauses, so callers get it inlined into their own plan.
CREATE OR REPLACE FUNCTION health_store.source_rollup(p_person text, p_type text, p_day date, p_source text,
                                                      p_samples health_store.sample_facts[])
RETURNS SETOF health_store.rollup_source
LANGUAGE sql STABLE
BEGIN ATOMIC
  SELECT r.*
  FROM (SELECT p_type AS type) t
  LEFT JOIN health_store.catalog c ON c.type = t.type
  LEFT JOIN health_store.rules ru ON ru.rule = c.rule
  CROSS JOIN LATERAL (
    SELECT min(s.kind) AS kind,
           count(*) AS samples,
           count(s.value) AS n_values,
           CASE WHEN count(s.value) > 0 THEN
             -- Values with at most six decimals (nearly all): exact sums of whole micro-units.
             coalesce(sum(round(s.value * 1000000)::bigint)
                        FILTER (WHERE abs(s.value) < 1e9 AND round(s.value * 1000000) / 1000000 = s.value) * 0.000001, 0)
             + coalesce(sum(s.value::numeric)
                        FILTER (WHERE NOT (abs(s.value) < 1e9 AND round(s.value * 1000000) / 1000000 = s.value)), 0)
           END AS sum_value,
           min(s.value) AS min_value,
           max(s.value) AS max_value,
           min(s.start_at) AS first_start_at,
           max(s.start_at) AS last_start_at,
           -- Rule sleep: seconds per stage (sleep_stages says which are asleep), unknown
           -- values apart.
           CASE WHEN c.rule = 'sleep' THEN
             coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE st.is_asleep), 0)
           END AS asleep_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE st.name = 'inBed') AS in_bed_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE st.name = 'asleepUnspecified') AS unspecified_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE st.name = 'awake') AS awake_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE st.name = 'asleepCore') AS core_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE st.name = 'asleepDeep') AS deep_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE st.name = 'asleepREM') AS rem_s,
           sum(extract(epoch FROM s.end_at - s.start_at))
             FILTER (WHERE c.rule = 'sleep' AND st.value IS NULL AND s.value IS NOT NULL) AS unknown_s,
           -- Rule workout: count and sums over the samples that are workouts; distance and
           -- energy stay NULL when no workout carries them.
           CASE WHEN c.rule = 'workout' THEN count(*) FILTER (WHERE health_store.is_workout(c.rule, s.kind)) END AS workouts,
           sum(s.duration_s::numeric) FILTER (WHERE health_store.is_workout(c.rule, s.kind)) AS duration_s,
           sum(s.distance_m::numeric) FILTER (WHERE health_store.is_workout(c.rule, s.kind)) AS distance_m,
           sum(s.energy_kcal::numeric) FILTER (WHERE health_store.is_workout(c.rule, s.kind)) AS energy_kcal
    FROM unnest(p_samples) s
    LEFT JOIN health_store.sleep_stages st ON c.rule = 'sleep' AND st.value = s.value
    HAVING count(*) > 0
  ) g
  -- Rule latest: the source's latest sample with a value (start desc, end desc, uuid asc;
  -- merge_source_rollups picks between two sets' latest by the same order).
  LEFT JOIN LATERAL (
    SELECT s.start_at, s.end_at, s.value, s.uuid
    FROM unnest(p_samples) s
    WHERE c.rule = 'latest' AND s.value IS NOT NULL
    ORDER BY s.start_at DESC, s.end_at DESC, s.uuid
    LIMIT 1
  ) l ON true
  CROSS JOIN LATERAL (
    SELECT p_person AS person, p_type AS type, p_day AS day, p_source AS source,
           c.rule, coalesce(ru.per_source_winner, false) AS per_source_winner, c.metric,
           coalesce(ru.day_unit, c.unit) AS unit, g.kind, g.samples, g.n_values, g.sum_value,
           g.min_value, g.max_value, g.first_start_at, g.last_start_at,
           health_store.source_total(c.rule, g.sum_value, g.asleep_s) AS total,
           l.start_at AS latest_start_at, l.end_at AS latest_end_at, l.value AS latest_value,
           l.uuid AS latest_uuid, g.asleep_s, g.in_bed_s, g.unspecified_s, g.awake_s, g.core_s,
           g.deep_s, g.rem_s, g.unknown_s, g.workouts, g.duration_s, g.distance_m, g.energy_kcal
  ) x
  CROSS JOIN LATERAL jsonb_populate_record(NULL::health_store.rollup_source, to_jsonb(x)) r;
END;

COMMENT ON FUNCTION health_store.source_rollup(text, text, date, text, health_store.sample_facts[]) IS
  'Rollup level 1 of one person, type, day and source made from a set of its samples (no row for none): the one definition of a level-1 row, used by calc_source and by the batch merge.';

-- Level 1 of one key from two disjoint sets of its samples: a (the stored row, or NULL when
-- the key has none) and b (source_rollup of samples just added). Equal, column by column, to
-- source_rollup of both sets: counts and exact sums add (a sum stays NULL while neither set
-- has a summand), min and max take the extremes, the latest sample is the later of the two
-- by source_rollup's order, and the total follows from the merged sums. Keeps a's rank.
CREATE OR REPLACE FUNCTION health_store.merge_source_rollups(a health_store.rollup_source, b health_store.rollup_source)
RETURNS SETOF health_store.rollup_source
LANGUAGE sql STABLE
BEGIN ATOMIC
  SELECT r.*
  FROM (SELECT 1) one
  LEFT JOIN LATERAL (
    SELECT x.start_at, x.end_at, x.value, x.uuid
    FROM (VALUES (a.latest_start_at, a.latest_end_at, a.latest_value, a.latest_uuid),
                 (b.latest_start_at, b.latest_end_at, b.latest_value, b.latest_uuid)) AS x (start_at, end_at, value, uuid)
    WHERE x.start_at IS NOT NULL
    ORDER BY x.start_at DESC, x.end_at DESC, x.uuid
    LIMIT 1
  ) l ON true
  CROSS JOIN LATERAL (
    SELECT coalesce(a.sum_value + b.sum_value, a.sum_value, b.sum_value) AS sum_value,
           coalesce(a.asleep_s + b.asleep_s, a.asleep_s, b.asleep_s) AS asleep_s
  ) s
  CROSS JOIN LATERAL (
    SELECT b.person, b.type, b.day, b.source, b.rule, b.per_source_winner, b.metric, b.unit,
           least(a.kind, b.kind) AS kind,
           coalesce(a.samples + b.samples, b.samples) AS samples,
           coalesce(a.n_values + b.n_values, b.n_values) AS n_values,
           s.sum_value,
           least(a.min_value, b.min_value) AS min_value,
           greatest(a.max_value, b.max_value) AS max_value,
           least(a.first_start_at, b.first_start_at) AS first_start_at,
           greatest(a.last_start_at, b.last_start_at) AS last_start_at,
           health_store.source_total(b.rule, s.sum_value, s.asleep_s) AS total,
           l.start_at AS latest_start_at, l.end_at AS latest_end_at, l.value AS latest_value,
           l.uuid AS latest_uuid,
           s.asleep_s,
           coalesce(a.in_bed_s + b.in_bed_s, a.in_bed_s, b.in_bed_s) AS in_bed_s,
           coalesce(a.unspecified_s + b.unspecified_s, a.unspecified_s, b.unspecified_s) AS unspecified_s,
           coalesce(a.awake_s + b.awake_s, a.awake_s, b.awake_s) AS awake_s,
           coalesce(a.core_s + b.core_s, a.core_s, b.core_s) AS core_s,
           coalesce(a.deep_s + b.deep_s, a.deep_s, b.deep_s) AS deep_s,
           coalesce(a.rem_s + b.rem_s, a.rem_s, b.rem_s) AS rem_s,
           coalesce(a.unknown_s + b.unknown_s, a.unknown_s, b.unknown_s) AS unknown_s,
           coalesce(a.workouts + b.workouts, a.workouts, b.workouts) AS workouts,
           coalesce(a.duration_s + b.duration_s, a.duration_s, b.duration_s) AS duration_s,
           coalesce(a.distance_m + b.distance_m, a.distance_m, b.distance_m) AS distance_m,
           coalesce(a.energy_kcal + b.energy_kcal, a.energy_kcal, b.energy_kcal) AS energy_kcal,
           a.rank
  ) x
  CROSS JOIN LATERAL jsonb_populate_record(NULL::health_store.rollup_source, to_jsonb(x)) r;
END;

COMMENT ON FUNCTION health_store.merge_source_rollups(health_store.rollup_source, health_store.rollup_source) IS
  'Rollup level 1 of one key from its stored row (or NULL) and source_rollup of samples added to it: equal to source_rollup of all of them.';

-- What level 1 reads of one stored sample: calc_source, the batch refresh and store_batch
-- all make a key's sample set with this.
CREATE OR REPLACE FUNCTION health_store.sample_facts_of(s health_store.samples) RETURNS health_store.sample_facts
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ROW(s.kind, s.value, s.start_at, s.end_at, s.uuid, s.activity_type, s.duration_s,
           s.distance_m, s.energy_kcal)::health_store.sample_facts;

COMMENT ON FUNCTION health_store.sample_facts_of(health_store.samples) IS
  'The columns of a stored sample that rollup level 1 aggregates.';

-- Level 1 of every key held, from the samples: source_rollup of each key's samples, as one
-- rollup_source row per key. The key columns come from the grouping, so a filter on them
-- reaches the index samples(person, type, day, source) and the rows arrive grouped.
CREATE OR REPLACE VIEW health_store.calc_source AS
SELECT g.person, g.type, g.day, g.source, r AS rollup
FROM (
  SELECT s.person, s.type, s.day, s.source, array_agg(health_store.sample_facts_of(s)) AS samples
  FROM health_store.samples s
  -- A coalescing counts in no total and no sample count (24_coalescing.sql).
  WHERE NOT s.coalesced
  GROUP BY s.person, s.type, s.day, s.source
) g
CROSS JOIN LATERAL health_store.source_rollup(g.person, g.type, g.day, g.source, g.samples) r;

COMMENT ON VIEW health_store.calc_source IS
  'Rollup level 1 computed straight from health_store.samples: per key, source_rollup of its samples as a rollup_source row (rank NULL). What refresh, rebuild and verify compare with and write.';

REVOKE EXECUTE ON FUNCTION
  health_store.source_total(text, numeric, numeric),
  health_store.source_rollup(text, text, date, text, health_store.sample_facts[]),
  health_store.merge_source_rollups(health_store.rollup_source, health_store.rollup_source)
FROM PUBLIC;
