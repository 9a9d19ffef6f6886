-- Rollup level 1: per person, type, local day and source, the aggregates of the samples held
-- (table health_store.rollup_source: the key, what the type's rule copies in, the total, the
-- rank, and the aggregates as one column `agg` of type health_store.source_aggregates).
--
--   health_store.samples          one row per sample held
--     └ rollup_source             per person, type, day, source: counts, sums, stages, ranks
--         └ rollup_day_type       per person, type, day: the day value by the type's rule
--             └ rollup_day        per person, day: the daily_summary row
--
-- key_rollup is the one definition of the aggregates of a set of one key's samples;
-- calc_source applies it to every key's samples held, and a batch applies it to the samples it
-- added and merges the result into the stored aggregates (merge_source_rollups). Both are
-- pure functions of their arguments: the caller joins what the type's rule is
-- (health_store.type_rules).
--
-- The functions taking apart a composite type a table holds (source_aggregates) have string
-- bodies (a body parsed at creation would record a dependency on each field it reads, and a
-- cluster sharded by person cannot order such dependencies: docs/scaling.md) with a pinned
-- search_path instead. key_rollup takes apart sample_facts, which no table holds, in a body
-- parsed at creation, so that it is inlined.
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
CREATE OR REPLACE FUNCTION health_store.source_total(p_rule text, p_agg health_store.source_aggregates)
RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE p_rule WHEN 'total' THEN (p_agg).sum_value WHEN 'sleep' THEN (p_agg).asleep_s / 60 END
$$;

COMMENT ON FUNCTION health_store.source_total(text, health_store.source_aggregates) IS
  'A level-1 total by rule: the exact sum of value (total) or the minutes asleep (sleep); NULL for other rules.';

-- What level 1 reads of one stored sample: calc_source and store_samples both make a key's
-- sample set with this.
CREATE OR REPLACE FUNCTION health_store.sample_facts_of(kind text, value double precision, start_at timestamptz,
                                                        end_at timestamptz, uuid uuid, activity_type integer,
                                                        duration_s double precision, distance_m double precision,
                                                        energy_kcal double precision, value_min double precision,
                                                        value_max double precision)
RETURNS health_store.sample_facts
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ROW(kind, value, start_at, end_at, uuid, activity_type, duration_s, distance_m, energy_kcal, value_min,
           value_max)::health_store.sample_facts;

COMMENT ON FUNCTION health_store.sample_facts_of(text, double precision, timestamptz, timestamptz, uuid, integer, double precision, double precision, double precision, double precision, double precision) IS
  'The columns of a stored sample that rollup level 1 aggregates (value_min and value_max: the extremes a summarized reading stands for).';

-- The aggregates of a set of one key's samples under the type's rule: one row (none for an
-- empty set). One pass over the samples gives every aggregate; what only some rules need (sleep
-- stages, workout sums) is filtered by the rule, so other rules pay nothing for it, and the
-- latest sample is looked up only for rule latest.
--
-- A set-returning function with a body parsed when it is made, so that the planner inlines it
-- into the caller's statement (called in FROM, LATERAL: `CROSS JOIN LATERAL
-- health_store.key_rollup(…) a`, the aggregates as the row `a`): the aggregation is set up once
-- per statement and run again per key. Called as a function per key (a string body with a
-- pinned search_path is never inlined) it was set up anew for every key, five times the cost of
-- running it (2,000 keys: 455 vs 80 ms).
CREATE OR REPLACE FUNCTION health_store.key_rollup(p_rule text, p_samples health_store.sample_facts[])
RETURNS SETOF health_store.source_aggregates
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
  SELECT g.kind, g.samples, g.n_values, g.sum_value, g.min_value, g.max_value, g.first_start_at, g.last_start_at,
         l.start_at, l.end_at, l.value, l.uuid, g.asleep_s, g.in_bed_s, g.unspecified_s, g.awake_s, g.core_s,
         g.deep_s, g.rem_s, g.unknown_s, g.workouts, g.duration_s, g.distance_m, g.energy_kcal
  FROM (
    SELECT min(s.kind COLLATE "C") AS kind,  -- byte order, whatever the database's collation
           count(*) AS samples,
           count(s.value) AS n_values,
           CASE WHEN count(s.value) > 0 THEN
             -- Values with at most six decimals (nearly all): exact sums of whole micro-units.
             coalesce(sum(round(s.value * 1000000)::bigint)
                        FILTER (WHERE abs(s.value) < 1e9 AND round(s.value * 1000000) / 1000000 = s.value) * 0.000001, 0)
             + coalesce(sum(s.value::numeric)
                        FILTER (WHERE NOT (abs(s.value) < 1e9 AND round(s.value * 1000000) / 1000000 = s.value)), 0)
           END AS sum_value,
           -- A summarized reading (Health Auto Export's heart rate) stands for its bucket's extremes.
           min(coalesce(s.value_min, s.value)) AS min_value,
           max(coalesce(s.value_max, s.value)) AS max_value,
           min(s.start_at) AS first_start_at,
           max(s.start_at) AS last_start_at,
           -- Rule sleep: seconds per stage (health_store.is_asleep says which are sleep),
           -- values of no known stage apart: a number no name is known for, or no value at all
           -- (an export names a stage this version does not know: it keeps the name in the
           -- payload and no value).
           CASE WHEN p_rule = 'sleep' THEN
             coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE health_store.is_asleep(s.value)), 0)
           END AS asleep_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE p_rule = 'sleep' AND health_store.sleep_stage(s.value) = 'inBed') AS in_bed_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE p_rule = 'sleep' AND health_store.sleep_stage(s.value) = 'asleepUnspecified') AS unspecified_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE p_rule = 'sleep' AND health_store.sleep_stage(s.value) = 'awake') AS awake_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE p_rule = 'sleep' AND health_store.sleep_stage(s.value) = 'asleepCore') AS core_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE p_rule = 'sleep' AND health_store.sleep_stage(s.value) = 'asleepDeep') AS deep_s,
           sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE p_rule = 'sleep' AND health_store.sleep_stage(s.value) = 'asleepREM') AS rem_s,
           -- A sample sent with another kind than a category (its typed value is empty) is no stage.
           sum(extract(epoch FROM s.end_at - s.start_at))
             FILTER (WHERE p_rule = 'sleep' AND health_store.sleep_stage(s.value) IS NULL AND s.kind = 'category') AS unknown_s,
           -- Rule workout: count and sums over the samples that are workouts; distance and
           -- energy stay NULL when no workout carries them.
           CASE WHEN p_rule = 'workout' THEN count(*) FILTER (WHERE health_store.is_workout(p_rule, s.kind)) END AS workouts,
           sum(s.duration_s::numeric) FILTER (WHERE health_store.is_workout(p_rule, s.kind)) AS duration_s,
           sum(s.distance_m::numeric) FILTER (WHERE health_store.is_workout(p_rule, s.kind)) AS distance_m,
           sum(s.energy_kcal::numeric) FILTER (WHERE health_store.is_workout(p_rule, s.kind)) AS energy_kcal
    FROM unnest(p_samples) s
    HAVING count(*) > 0
  ) g
  -- Rule latest: the source's latest sample with a value (start desc, end desc, uuid asc;
  -- merge_source_rollups picks between two sets' latest by the same order).
  LEFT JOIN LATERAL (
    SELECT s.start_at, s.end_at, s.value, s.uuid
    FROM unnest(p_samples) s
    WHERE p_rule = 'latest' AND s.value IS NOT NULL
    ORDER BY s.start_at DESC, s.end_at DESC, s.uuid
    LIMIT 1
  ) l ON true;
END;

COMMENT ON FUNCTION health_store.key_rollup(text, health_store.sample_facts[]) IS
  'Rollup level 1''s aggregates of a set of one key''s samples under the type''s rule, as one row (none for an empty set): the one definition, used by calc_source and by the batch merge.';

-- The aggregates of one key from two disjoint sets of its samples: a (the stored ones, or NULL
-- when the key has none) and b (key_rollup of samples just added). Equal, field by field,
-- to key_rollup of both sets: counts and exact sums add (a sum stays NULL while neither set
-- has a summand), min and max take the extremes, the latest sample is the later of the two by
-- key_rollup's order.
CREATE OR REPLACE FUNCTION health_store.merge_source_rollups(a health_store.source_aggregates, b health_store.source_aggregates)
RETURNS health_store.source_aggregates
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT ROW(least(a.kind COLLATE "C", b.kind),
             coalesce(a.samples + b.samples, a.samples, b.samples),
             coalesce(a.n_values + b.n_values, a.n_values, b.n_values),
             coalesce(a.sum_value + b.sum_value, a.sum_value, b.sum_value),
             least(a.min_value, b.min_value),
             greatest(a.max_value, b.max_value),
             least(a.first_start_at, b.first_start_at),
             greatest(a.last_start_at, b.last_start_at),
             l.start_at, l.end_at, l.value, l.uuid,
             coalesce(a.asleep_s + b.asleep_s, a.asleep_s, b.asleep_s),
             coalesce(a.in_bed_s + b.in_bed_s, a.in_bed_s, b.in_bed_s),
             coalesce(a.unspecified_s + b.unspecified_s, a.unspecified_s, b.unspecified_s),
             coalesce(a.awake_s + b.awake_s, a.awake_s, b.awake_s),
             coalesce(a.core_s + b.core_s, a.core_s, b.core_s),
             coalesce(a.deep_s + b.deep_s, a.deep_s, b.deep_s),
             coalesce(a.rem_s + b.rem_s, a.rem_s, b.rem_s),
             coalesce(a.unknown_s + b.unknown_s, a.unknown_s, b.unknown_s),
             coalesce(a.workouts + b.workouts, a.workouts, b.workouts),
             coalesce(a.duration_s + b.duration_s, a.duration_s, b.duration_s),
             coalesce(a.distance_m + b.distance_m, a.distance_m, b.distance_m),
             coalesce(a.energy_kcal + b.energy_kcal, a.energy_kcal, b.energy_kcal))::health_store.source_aggregates
  FROM (SELECT 1) one
  LEFT JOIN LATERAL (
    SELECT x.start_at, x.end_at, x.value, x.uuid
    FROM (VALUES (a.latest_start_at, a.latest_end_at, a.latest_value, a.latest_uuid),
                 (b.latest_start_at, b.latest_end_at, b.latest_value, b.latest_uuid)) AS x (start_at, end_at, value, uuid)
    WHERE x.start_at IS NOT NULL
    ORDER BY x.start_at DESC, x.end_at DESC, x.uuid
    LIMIT 1
  ) l ON true
$$;

COMMENT ON FUNCTION health_store.merge_source_rollups(health_store.source_aggregates, health_store.source_aggregates) IS
  'Rollup level 1''s aggregates of one key from its stored ones (or NULL) and key_rollup of samples added to it: equal to key_rollup of all of them.';

-- Level 1 of every key held, from the samples: one rollup_source row per key (rank NULL: level
-- 2 sets it). The key columns come from the grouping, so a filter on them reaches the index
-- samples(person, type, source, start_at) and the rows arrive grouped.
CREATE OR REPLACE VIEW health_store.calc_source AS
SELECT k.person, k.type, k.day, k.source, t.rule, coalesce(t.per_source_winner, false) AS per_source_winner,
       t.metric, t.unit, health_store.source_total(t.rule, a.agg) AS total,
       NULL::integer AS rank, a.agg
FROM (
  SELECT s.person, s.type, s.day, s.source,
         array_agg(health_store.sample_facts_of(s.kind, s.value, s.start_at, s.end_at, s.uuid, s.activity_type,
                                                s.duration_s, coalesce(s.distance_m, f.distance_m),
                                                coalesce(s.energy_kcal, f.energy_kcal), s.value_min,
                                                s.value_max)) AS samples
  FROM health_store.live_samples s
  -- A workout's distance and energy, where it has none, from what a Health Auto Export copy of
  -- it brought (0104_workout_fills.sql). A plain join by the key: Citus pushes it down to the
  -- person's shard (a lateral gated by the kind, OFFSET 0, it cannot), and on one PostgreSQL it
  -- cost the same (a key's recompute, every key of a person: measured, docs/benchmarks.md).
  LEFT JOIN health_store.workout_fills f ON f.person = s.person AND f.uuid = s.uuid
  -- A coalescing counts in no total and no sample count (24_coalescing.sql), nor does a sample
  -- Health deleted (live_samples: 62_deletions.sql).
  WHERE NOT s.coalesced
  GROUP BY s.person, s.type, s.day, s.source
) k
LEFT JOIN health_store.type_rules t ON t.type = k.type
-- Once per key (OFFSET 0: not folded into each use of agg).
CROSS JOIN LATERAL (SELECT a::health_store.source_aggregates AS agg FROM health_store.key_rollup(t.rule, k.samples) a OFFSET 0) a;

COMMENT ON VIEW health_store.calc_source IS
  'Rollup level 1 computed straight from health_store.samples: per key, the rollup_source row of its samples (rank NULL). What refresh, rebuild and verify compare with and write.';

REVOKE EXECUTE ON FUNCTION
  health_store.source_total(text, health_store.source_aggregates),
  health_store.key_rollup(text, health_store.sample_facts[]),
  health_store.merge_source_rollups(health_store.source_aggregates, health_store.source_aggregates)
FROM PUBLIC;
