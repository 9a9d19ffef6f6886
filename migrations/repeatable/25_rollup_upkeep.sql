-- Keeping the three rollup levels equal to a recompute: the refresh a batch runs, the
-- rebuild and the verification.
--
-- Refreshing runs as one statement per level, each reading the level below as the previous
-- statement left it; deletes of keys left without data ride along in the same statement.
-- Each asks its calc view one key at a time, in a LATERAL subquery kept apart with OFFSET 0:
-- the key's equality conditions are pushed under the view's GROUP BY (or window) into an
-- index scan of exactly that key. (Joined or `= ANY` conditions are not: the view would be
-- computed for every key of the person.) Stored rows are read and ranks written the same
-- way, key by key: whatever plan the statement gets, each key can only be an index scan.
-- Plans are never JIT-compiled: a plan over a few keys can look costly enough to be compiled,
-- and compiling costs more than running it.
--
-- Rows move whole: a level-2 or level-3 calc view's row is the table's row, column for column
-- (the view gives the table's columns in the table's order, which SchemaLayoutTests holds to:
-- `ROW(v.*)::` the table's type, where a pass through jsonb by column name cost 0.6 ms of a
-- batch's 9 in the rollups), is written with `SELECT (x).*`, and an upsert compares and sets
-- the whole row; level 1's aggregates are one column (agg). Every refresh runs under the
-- person lock (health_store.lock_person), so two writers of one person never refresh at once.
--
-- Repeatable file (docs/architecture.md, "Schema layout").

-- Levels 2 and 3 for the (day, type) pairs of the given keys of one person (their sources do
-- not matter), after level 1 changed: the day values and each source's rank, then the days'
-- summary rows. Caller holds the person lock.
--
-- Each level is read with the keys' days and types as two lists (`= ANY`), which the view's
-- grouping and windows let through to the index of the level below: the pairs asked for, and
-- the few other pairs of those days and types, which are recomputed to what they already
-- hold and not rewritten. Recomputed rows are kept in a variable and written by a statement of
-- their own (docs/scaling.md: one modification per statement, none over a view).
CREATE OR REPLACE FUNCTION health_store.refresh_day_types(p_person text, p_keys health_store.rollup_key[])
RETURNS void LANGUAGE plpgsql
SET jit = off
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_days    date[];
  v_types   text[];
  v_pairs   health_store.rollup_day_type[];
  v_summary health_store.rollup_day[];
BEGIN
  SELECT array_agg(DISTINCT k.day), array_agg(DISTINCT k.type) INTO v_days, v_types FROM unnest(p_keys) k;
  IF v_days IS NULL THEN
    RETURN;
  END IF;

  SELECT array_agg(ROW(v.*)::health_store.rollup_day_type) INTO v_pairs
  FROM health_store.calc_day_type v
  WHERE v.person = p_person AND v.type = ANY (v_types) AND v.day = ANY (v_days);

  -- A pair left without level 1 rows has no data any more: no row. Only a pair asked for can
  -- have lost its last level 1 row (no other pair's level 1 changed), so when every pair asked
  -- came back there is nothing to delete (most batches: they only added samples).
  IF EXISTS (SELECT 1 FROM unnest(p_keys) k
             WHERE NOT EXISTS (SELECT 1 FROM unnest(v_pairs) x WHERE x.type = k.type AND x.day = k.day)) THEN
    DELETE FROM health_store.rollup_day_type d
    WHERE d.person = p_person AND d.type = ANY (v_types) AND d.day = ANY (v_days)
      AND NOT EXISTS (SELECT 1 FROM unnest(v_pairs) x WHERE x.type = d.type AND x.day = d.day);
  END IF;

  INSERT INTO health_store.rollup_day_type AS t
  SELECT x.* FROM unnest(v_pairs) x
  ON CONFLICT (person, type, day) DO UPDATE SET
    rule = excluded.rule, per_source_winner = excluded.per_source_winner,
    metric = excluded.metric, unit = excluded.unit, kind = excluded.kind,
    samples = excluded.samples, n_values = excluded.n_values,
    first_start_at = excluded.first_start_at, last_start_at = excluded.last_start_at,
    value = excluded.value, source = excluded.source, alternatives = excluded.alternatives,
    ranked_sources = excluded.ranked_sources, min_value = excluded.min_value,
    max_value = excluded.max_value, measured_at = excluded.measured_at,
    asleep_min = excluded.asleep_min, core_min = excluded.core_min,
    deep_min = excluded.deep_min, rem_min = excluded.rem_min,
    unspecified_min = excluded.unspecified_min, awake_min = excluded.awake_min,
    in_bed_min = excluded.in_bed_min, unknown_min = excluded.unknown_min,
    workouts = excluded.workouts, duration_s = excluded.duration_s,
    distance_m = excluded.distance_m, energy_kcal = excluded.energy_kcal
  -- Unchanged rows are not rewritten.
  WHERE (t.*) IS DISTINCT FROM (excluded.*);

  -- Each source's rank (rules total and sleep), from the day's ranking just computed; none to
  -- set where no pair ranks its sources (readings, latest values, workouts).
  IF EXISTS (SELECT 1 FROM unnest(v_pairs) x WHERE x.per_source_winner) THEN
    UPDATE health_store.rollup_source r SET rank = array_position(x.ranked_sources, r.source)
    FROM unnest(v_pairs) x
    WHERE x.per_source_winner AND r.person = p_person AND r.type = x.type AND r.day = x.day
      AND r.rank IS DISTINCT FROM array_position(x.ranked_sources, r.source);
  END IF;

  SELECT array_agg(ROW(v.*)::health_store.rollup_day) INTO v_summary
  FROM health_store.calc_day v
  WHERE v.person = p_person AND v.day = ANY (v_days);

  -- A day left without pairs: no row (a summary row per day that has any; the days are distinct).
  IF coalesce(cardinality(v_summary), 0) < cardinality(v_days) THEN
    DELETE FROM health_store.rollup_day d
    WHERE d.person = p_person AND d.day = ANY (v_days)
      AND NOT EXISTS (SELECT 1 FROM unnest(v_summary) x WHERE x.day = d.day);
  END IF;

  INSERT INTO health_store.rollup_day AS t
  SELECT x.* FROM unnest(v_summary) x
  ON CONFLICT (person, day) DO UPDATE SET
    steps = excluded.steps, distance_m = excluded.distance_m,
    flights_climbed = excluded.flights_climbed,
    active_energy_kcal = excluded.active_energy_kcal,
    basal_energy_kcal = excluded.basal_energy_kcal, exercise_min = excluded.exercise_min,
    stand_min = excluded.stand_min, sleep_min = excluded.sleep_min,
    heart_rate_min = excluded.heart_rate_min, heart_rate_mean = excluded.heart_rate_mean,
    heart_rate_max = excluded.heart_rate_max, resting_heart_rate = excluded.resting_heart_rate,
    walking_heart_rate = excluded.walking_heart_rate, hrv_sdnn_ms = excluded.hrv_sdnn_ms,
    oxygen_saturation_pct = excluded.oxygen_saturation_pct,
    respiratory_rate = excluded.respiratory_rate, vo2_max = excluded.vo2_max,
    body_temperature_c = excluded.body_temperature_c,
    blood_pressure_systolic = excluded.blood_pressure_systolic,
    blood_pressure_diastolic = excluded.blood_pressure_diastolic,
    body_mass_kg = excluded.body_mass_kg, height_m = excluded.height_m,
    body_mass_index = excluded.body_mass_index, body_fat_pct = excluded.body_fat_pct,
    lean_body_mass_kg = excluded.lean_body_mass_kg, workouts = excluded.workouts,
    workout_duration_s = excluded.workout_duration_s, unknown_samples = excluded.unknown_samples
  WHERE (t.*) IS DISTINCT FROM (excluded.*);
END
$$;

COMMENT ON FUNCTION health_store.refresh_day_types(text, health_store.rollup_key[]) IS
  'Recomputes level 2 (rollup_day_type) and the ranks of the (day, type) pairs of the given keys of one person from rollup_source, then level 3 (rollup_day) of their days. Caller holds the person lock.';

-- The rollups after one batch of one person, then everything derived from them. store_samples
-- calls it in the batch's transaction, holding the person lock, with
--   p_keys   the keys to recompute from the samples: every key a replaced sample left or
--            joined, or whose coalescing changed (NULL: none)
--   p_added  per key, the samples the batch inserted into every other key it touched (NULL:
--            none; never a key to recompute): those keys only gained samples, so their stored
--            aggregates are merged with key_rollup of the added samples instead of reading
--            all of the key's samples again.
-- Level 1 is one statement for both kinds of key; then levels 2 and 3 for every (day, type)
-- touched. (A writer storing several batches in one transaction has apply_sample_changes queue
-- the work instead, health_store.defer_rollups: health_store.flush_rollups does it once, before
-- its COMMIT, for every key the batches touched.)
CREATE OR REPLACE FUNCTION health_store.refresh_batch_rollups(p_person text, p_keys health_store.rollup_key[],
                                                              p_added health_store.added_samples[])
RETURNS void LANGUAGE plpgsql
SET jit = off
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_pairs  health_store.rollup_key[];
  v_fresh  health_store.stored_level1[];
  v_stored health_store.stored_level1[];
  v_rules  health_store.type_rule[];
  v_types  text[];
  v_all    health_store.rollup_key[];
BEGIN
  IF coalesce(cardinality(p_keys), 0) = 0 AND coalesce(cardinality(p_added), 0) = 0 THEN
    RETURN;
  END IF;
  p_keys := ARRAY(SELECT DISTINCT k FROM unnest(p_keys) k);
  -- The rules of the types touched, read alone (a rule is reference data: docs/scaling.md), by
  -- a list (on Citus a subquery of the batch's keys there went through an intermediate result).
  v_types := ARRAY(SELECT a.type FROM unnest(p_added) a UNION SELECT k.type FROM unnest(p_keys) k);
  SELECT array_agg(ROW(r.type, r.rule, r.per_source_winner, r.metric, r.unit)::health_store.type_rule) INTO v_rules
  FROM health_store.type_rules r
  WHERE r.type = ANY (v_types);

  -- Keys to recompute: their aggregates from all of their samples, one key at a time (the key's
  -- equality conditions reach the samples' index under the grouping; lists of days, types and
  -- sources would read their whole cross product).
  -- (Most pushed batches have none: on Citus the statement cost 5.6 ms even then.)
  IF cardinality(p_keys) > 0 THEN
    SELECT array_agg(ROW(k.day, k.type, k.source, NULL, v.agg)::health_store.stored_level1) INTO v_fresh
    FROM unnest(p_keys) k
    CROSS JOIN LATERAL (SELECT v.agg FROM health_store.calc_source v
                        WHERE v.person = p_person AND v.type = k.type AND v.day = k.day AND v.source = k.source
                        OFFSET 0) v;
  END IF;

  -- Every key's stored aggregates and rank, by one index probe each (the keys listed first).
  v_all := p_keys || ARRAY(SELECT ROW(a.day, a.type, a.source)::health_store.rollup_key FROM unnest(p_added) a);
  SELECT array_agg(ROW(t.day, t.type, t.source, t.rank, t.agg)::health_store.stored_level1) INTO v_stored
  FROM unnest(v_all) k
  JOIN LATERAL (SELECT t.day, t.type, t.source, t.rank, t.agg FROM health_store.rollup_source t
                WHERE t.person = p_person AND t.type = k.type AND t.day = k.day AND t.source = k.source) t ON true;

  -- Keys that only gained samples: their stored aggregates merged with the added samples' own
  -- (a key with none stored yet, most of a backlog's, takes the added samples' as they are:
  -- merging with nothing gives them back, at the cost of a function call per key).
  v_fresh := v_fresh || ARRAY(
    SELECT ROW(a.day, a.type, a.source, NULL, m.agg)::health_store.stored_level1
    FROM unnest(p_added) a
    LEFT JOIN unnest(v_rules) r ON r.type = a.type
    LEFT JOIN unnest(v_stored) s ON s.day = a.day AND s.type = a.type AND s.source = a.source
    CROSS JOIN LATERAL health_store.key_rollup(r.rule, a.samples) b
    CROSS JOIN LATERAL (SELECT CASE WHEN s.agg IS NULL THEN b::health_store.source_aggregates
                                    ELSE health_store.merge_source_rollups(s.agg, b::health_store.source_aggregates) END AS agg
                        OFFSET 0) m);

  -- A key whose last sample moved away (a replaced sample) has no data any more: no row.
  IF cardinality(p_keys) > 0 THEN
    DELETE FROM health_store.rollup_source r
    USING unnest(p_keys) k
    WHERE r.person = p_person AND r.type = k.type AND r.day = k.day AND r.source = k.source
      AND NOT EXISTS (SELECT 1 FROM unnest(v_fresh) x WHERE x.type = k.type AND x.day = k.day AND x.source = k.source);
  END IF;

  -- Every fresh row with its rule and its stored rank (level 2 sets ranks after this).
  INSERT INTO health_store.rollup_source AS t (person, type, day, source, rule, per_source_winner, metric, unit, total, rank, agg)
  SELECT p_person, f.type, f.day, f.source, r.rule, coalesce(r.per_source_winner, false), r.metric, r.unit,
         health_store.source_total(r.rule, f.agg), s.rank, f.agg
  FROM unnest(v_fresh) f
  LEFT JOIN unnest(v_rules) r ON r.type = f.type
  LEFT JOIN unnest(v_stored) s ON s.day = f.day AND s.type = f.type AND s.source = f.source
  ON CONFLICT (person, type, day, source) DO UPDATE SET
    rule = excluded.rule, per_source_winner = excluded.per_source_winner, metric = excluded.metric,
    unit = excluded.unit, total = excluded.total, rank = excluded.rank, agg = excluded.agg
  -- Unchanged rows are not rewritten.
  WHERE (t.*) IS DISTINCT FROM (excluded.*);

  -- Levels 2 and 3 of every (day, type) either kind of key touched.
  SELECT array_agg(ROW(d.day, d.type, NULL)::health_store.rollup_key) INTO v_pairs FROM (
    SELECT u.day, u.type FROM unnest(p_keys) AS u
    UNION
    SELECT a.day, a.type FROM unnest(p_added) AS a) d;
  PERFORM health_store.refresh_day_types(p_person, v_pairs);
END
$$;

COMMENT ON FUNCTION health_store.refresh_batch_rollups(text, health_store.rollup_key[], health_store.added_samples[]) IS
  'Refreshes the rollups after one batch of one person: the given keys recomputed from the samples, the keys that only gained samples merged from their stored aggregates and the added samples, then the day values and summary rows derived from them. Called by apply_sample_changes and flush_rollups under the person lock.';

-- A grouping writer's queue of rollup refreshes (a BatchGroup: backlog ingest, export imports),
-- kept in a temporary table of its own session, pg_temp.deferred_rollups (migration 0097): made
-- on the session's first deferral, emptied by truncation at every COMMIT (ON COMMIT DELETE
-- ROWS: no dead rows left in the database, nothing written to the WAL, invisible to every
-- other session). A deferred constraint trigger refuses the COMMIT of a transaction that
-- queued refreshes and did not flush them (flush_rollups deletes what it takes): the rollups
-- would be wrong, so nothing of it is stored. Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.defer_rollups(p_person text, p_keys health_store.rollup_key[],
                                                      p_added health_store.added_samples[])
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF to_regclass('pg_temp.deferred_rollups') IS NULL THEN
    CREATE TEMPORARY TABLE deferred_rollups (
      person text NOT NULL,
      keys   health_store.rollup_key[],
      added  health_store.added_samples[]
    ) ON COMMIT DELETE ROWS;
    -- Stored as they are, never compressed: each row is read once, by the flush, and pglz on
    -- a group's arrays of sample facts cost more than the import's own work (measured).
    ALTER TABLE pg_temp.deferred_rollups ALTER COLUMN keys SET STORAGE EXTERNAL,
      ALTER COLUMN added SET STORAGE EXTERNAL;
    CREATE CONSTRAINT TRIGGER deferred_rollups_flushed AFTER INSERT ON pg_temp.deferred_rollups
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION health_store.refuse_unflushed_rollups();
  END IF;
  INSERT INTO pg_temp.deferred_rollups (person, keys, added) VALUES (p_person, p_keys, p_added);
END
$$;

COMMENT ON FUNCTION health_store.defer_rollups(text, health_store.rollup_key[], health_store.added_samples[]) IS
  'Queues one batch''s rollup refreshes of a person in the session''s temporary deferred_rollups (made on first use, emptied at every COMMIT) for flush_rollups; a COMMIT with refreshes left unflushed is refused. Caller holds the person lock.';

-- The check at COMMIT of each queued row: still there means flush_rollups never took it.
CREATE OR REPLACE FUNCTION health_store.refuse_unflushed_rollups() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_temp.deferred_rollups d WHERE d.person = NEW.person) THEN
    RAISE EXCEPTION 'rollup refreshes deferred in this transaction were not flushed before COMMIT (health_store.flush_rollups)'
      USING ERRCODE = 'P0001';
  END IF;
  RETURN NULL;
END
$$;

COMMENT ON FUNCTION health_store.refuse_unflushed_rollups() IS
  'Deferred constraint trigger of the session''s deferred_rollups: refuses a COMMIT that leaves a person''s queued rollup refreshes unflushed.';

-- Before the COMMIT of a transaction that deferred a person's rollup refreshes (a BatchGroup:
-- backlog ingest, export imports): that person's queued keys in one refresh. A key recomputed
-- by any batch is recomputed (from the samples as they are now); the samples other batches
-- added to it need no merge then. The added samples of a key from several batches are merged
-- into its stored aggregates at once: every level-1 aggregate is associative, so one merge of
-- all of them equals one merge per batch. Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.flush_rollups(p_person text) RETURNS void
LANGUAGE plpgsql
SET jit = off
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_keys  health_store.rollup_key[];
  v_added health_store.added_samples[];
BEGIN
  -- No queue in this session: nothing was deferred.
  IF to_regclass('pg_temp.deferred_rollups') IS NOT NULL THEN
    WITH taken AS (
      DELETE FROM pg_temp.deferred_rollups d WHERE d.person = p_person
      RETURNING d.keys, d.added
    ),
    recompute AS (
      SELECT DISTINCT k.day, k.type, k.source FROM taken t CROSS JOIN LATERAL unnest(t.keys) AS k
    ),
    added AS (
      SELECT a.day, a.type, a.source, array_agg(f) AS samples
      FROM taken t CROSS JOIN LATERAL unnest(t.added) AS a CROSS JOIN LATERAL unnest(a.samples) AS f
      WHERE NOT EXISTS (SELECT 1 FROM recompute k WHERE k.day = a.day AND k.type = a.type AND k.source = a.source)
      GROUP BY a.day, a.type, a.source
    )
    SELECT (SELECT array_agg(ROW(k.day, k.type, k.source)::health_store.rollup_key) FROM recompute k),
           (SELECT array_agg(ROW(a.day, a.type, a.source, a.samples)::health_store.added_samples) FROM added a)
    INTO v_keys, v_added;
  END IF;
  PERFORM health_store.refresh_batch_rollups(p_person, v_keys, v_added);
END
$$;

COMMENT ON FUNCTION health_store.flush_rollups(text) IS
  'Refreshes, once, every rollup key a person''s batches queued in this transaction (apply_sample_changes with p_defer, defer_rollups); a BatchGroup calls it before COMMIT. Caller holds the person lock.';

-- Levels 2 and 3 of one person from level 1, for one type (NULL: every type).
-- Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.refresh_person_derived(p_person text, p_type text)
RETURNS void LANGUAGE plpgsql
SET jit = off
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_pairs health_store.rollup_key[];
BEGIN
  IF p_type IS NOT NULL THEN
    -- One type (a source priority changed): every day it has or had.
    SELECT array_agg(ROW(x.day, p_type, NULL)::health_store.rollup_key) INTO v_pairs FROM (
      SELECT r.day FROM health_store.rollup_source r WHERE r.person = p_person AND r.type = p_type
      UNION SELECT d.day FROM health_store.rollup_day_type d WHERE d.person = p_person AND d.type = p_type) x;
    IF v_pairs IS NOT NULL THEN
      PERFORM health_store.refresh_day_types(p_person, v_pairs);
    END IF;
    RETURN;
  END IF;

  DELETE FROM health_store.rollup_day WHERE person = p_person;
  DELETE FROM health_store.rollup_day_type WHERE person = p_person;
  INSERT INTO health_store.rollup_day_type
  SELECT v.*
  FROM health_store.calc_day_type v
  WHERE v.person = p_person
  -- Day-major, as batches arriving in time order leave them: the views read by day.
  ORDER BY v.day, v.type COLLATE "C";

  UPDATE health_store.rollup_source r SET rank = array_position(d.ranked_sources, r.source)
  FROM health_store.rollup_day_type d
  WHERE d.person = p_person AND r.person = p_person AND r.type = d.type AND r.day = d.day
    AND r.rank IS DISTINCT FROM array_position(d.ranked_sources, r.source);

  INSERT INTO health_store.rollup_day
  SELECT v.*
  FROM health_store.calc_day v WHERE v.person = p_person
  ORDER BY v.day;
END
$$;

COMMENT ON FUNCTION health_store.refresh_person_derived(text, text) IS
  'Recomputes levels 2 and 3 of one person for one type (NULL: every type) from rollup_source, e.g. after a source priority changed. Caller holds the person lock.';

-- Every rollup of one person (or of everyone, with NULL) from scratch.
CREATE OR REPLACE FUNCTION health_store.rebuild_rollups(p_person text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql
SET work_mem = '256MB'
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_person text;
BEGIN
  FOR v_person IN
    SELECT x.person FROM (
      SELECT s.person FROM health_store.sample_rows s WHERE p_person IS NULL
      UNION SELECT r.person FROM health_store.rollup_source r WHERE p_person IS NULL
      UNION SELECT p_person WHERE p_person IS NOT NULL) x
    GROUP BY x.person
    ORDER BY x.person COLLATE "C"
  LOOP
    PERFORM health_store.lock_person(v_person);
    PERFORM health_store.rebuild_coverings(v_person);
    DELETE FROM health_store.rollup_day WHERE person = v_person;
    DELETE FROM health_store.rollup_day_type WHERE person = v_person;
    DELETE FROM health_store.rollup_source WHERE person = v_person;

    INSERT INTO health_store.rollup_source (person, type, day, source, rule, per_source_winner, metric, unit, total, rank, agg)
    SELECT v.person, v.type, v.day, v.source, v.rule, v.per_source_winner, v.metric, v.unit, v.total, v.rank, v.agg
    FROM health_store.calc_source v WHERE v.person = v_person
    ORDER BY v.day, v.type COLLATE "C", v.source COLLATE "C";

    PERFORM health_store.refresh_person_derived(v_person, NULL);
  END LOOP;
END
$$;

COMMENT ON FUNCTION health_store.rebuild_rollups(text) IS
  'Rebuilds every rollup of one person (NULL: of everyone), and the coalescing state they depend on, from health_store.samples, under the person lock.';

-- Moves a person's samples from the table migration 0080 kept (health_store.samples_0080) into
-- health_store.sample_rows, compact by the current rule: the timestamps' offsets, the payload
-- without what those and the other columns rebuild
-- (health_store.compact_payload). The migration numbered the person's series already.
CREATE OR REPLACE FUNCTION health_store.compact_samples(p_person text)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
-- Numbers compared as full_payload writes them (compact_payload, 10_rules.sql).
SET extra_float_digits = 1
AS $$
BEGIN
  INSERT INTO health_store.sample_rows (
    person, uuid, start_at, end_at, value, first_received_at, last_received_at, export_id, series, day, origin,
    start_offset, end_offset, coalesced, duration_s, distance_m, energy_kcal, activity_type, deleted_at,
    deleted_by_export, kind, grp, unit, category_name, activity_name, id, payload)
  SELECT s.person, s.uuid, s.start_at, s.end_at, s.value, s.first_received_at, s.last_received_at, s.export_id, s.series,
         s.day, s.origin::health_store.sample_origin, s.start_offset, s.end_offset, s.coalesced, s.duration_s,
         s.distance_m, s.energy_kcal, s.activity_type, s.deleted_at, s.deleted_by_export, s.kind, s.grp, s.unit,
         s.category_name, s.activity_name, s.id,
         health_store.compact_payload(s.payload, (s.f).uuid, s.uuid, s.start_offset, s.end_offset, (s.f).value, s.value,
                                      s.unit, s.category_name, (s.f)."activityType", s.activity_type, s.activity_name,
                                      (s.f)."durationSeconds", s.duration_s, (s.f)."distanceMeters", s.distance_m,
                                      (s.f)."activeEnergyKilocalories", s.energy_kcal, NULL, NULL, NULL, NULL, NULL, NULL)
  FROM (SELECT o.person, o.uuid, o.start_at, o.end_at, o.value, o.first_received_at, o.last_received_at, o.export_id,
               k.series, o.day, o.origin, o.coalesced, o.duration_s, o.distance_m, o.energy_kcal, o.activity_type,
               o.deleted_at, o.deleted_by_export, o.kind, o.grp, o.unit, o.category_name, o.activity_name, o.payload,
               o.type, o.source, o.id,
               health_store.stamp_offset(o.payload->>'start') AS start_offset,
               health_store.stamp_offset(o.payload->>'end') AS end_offset,
               jsonb_populate_record(NULL::health_store.sent_fields, o.payload) AS f
        FROM health_store.samples_0080 o
        JOIN health_store.series k ON k.person = o.person AND k.type = o.type AND k.source = o.source
        WHERE o.person = p_person) s
  ORDER BY s.day, s.start_at;
END
$$;

COMMENT ON FUNCTION health_store.compact_samples(text) IS
  'Moves a person''s samples from the table migration 0080 kept into health_store.sample_rows, compact by the current rule.';

-- Work queued by versioned migrations (health_store.migration_tasks) that needs the current
-- definitions: the migrator calls this at the end of every run, in the same transaction.
CREATE OR REPLACE FUNCTION health_store.after_migrate()
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_person text;
BEGIN
  FOR v_person IN
    DELETE FROM health_store.migration_tasks WHERE task = 'compact_samples' RETURNING person
  LOOP
    PERFORM health_store.compact_samples(v_person);
  END LOOP;
  DROP TABLE IF EXISTS health_store.samples_0080;
  FOR v_person IN
    DELETE FROM health_store.migration_tasks WHERE task = 'rebuild_rollups' RETURNING person
  LOOP
    PERFORM health_store.rebuild_rollups(v_person);
  END LOOP;
  -- Levels 2 and 3 only, from level 1 as stored (a rule of the day values changed).
  FOR v_person IN
    DELETE FROM health_store.migration_tasks WHERE task = 'refresh_derived' RETURNING person
  LOOP
    PERFORM health_store.lock_person(v_person);
    PERFORM health_store.refresh_person_derived(v_person, NULL);
  END LOOP;
END
$$;

COMMENT ON FUNCTION health_store.after_migrate() IS
  'Runs the work versioned migrations queued in health_store.migration_tasks (moving a person''s samples into the compact table, rebuilding their rollups, or only their levels 2 and 3, under current definitions); called by the migrator at the end of each run.';

-- Every difference between one person's stored rollups and a recompute. Empty when equal.
--
-- Level 1 is compared with a recompute from the samples; level 2 with a recompute from the
-- stored level 1, each source's rank with the stored level 2, level 3 with a recompute from
-- the stored level 2. All empty means, level by level, that every stored rollup equals a
-- recompute from the samples alone. Rows are compared as JSON objects by column name. The
-- coalescing state the rollups rest on (coverings and samples.coalesced) is compared with a
-- recompute too (level coalescing, keyed by the covering sample's uuid as text in source).
CREATE OR REPLACE FUNCTION health_store.verify_rollups(p_person text)
RETURNS TABLE (level text, day date, type text, source text, stored jsonb, recomputed jsonb)
LANGUAGE plpgsql STABLE
SET work_mem = '256MB'
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_coverings health_store.covering[] := ARRAY(SELECT c FROM health_store.calc_coverings(p_person) c);
BEGIN
  RETURN QUERY
  WITH stored_source AS (
    SELECT r.type, r.day, r.source, to_jsonb(r) - 'rank' AS j
    FROM health_store.rollup_source r WHERE r.person = p_person
  ),
  -- Each source's rank against the day's ranking.
  rank_drift AS (
    SELECT r.type, r.day, r.source, jsonb_build_object('rank', r.rank) AS stored,
           jsonb_build_object('rank', array_position(d.ranked_sources, r.source)) AS recomputed
    FROM health_store.rollup_source r
    LEFT JOIN health_store.rollup_day_type d ON d.person = r.person AND d.type = r.type AND d.day = r.day
    WHERE r.person = p_person AND r.rank IS DISTINCT FROM array_position(d.ranked_sources, r.source)
  ),
  calc_source AS (
    SELECT v.type, v.day, v.source, to_jsonb(v) - 'rank' AS j
    FROM health_store.calc_source v WHERE v.person = p_person
  ),
  stored_day_type AS (
    SELECT d.type, d.day, to_jsonb(d) AS j FROM health_store.rollup_day_type d WHERE d.person = p_person
  ),
  calc_day_type AS (
    SELECT v.type, v.day, to_jsonb(v) AS j FROM health_store.calc_day_type v WHERE v.person = p_person
  ),
  stored_day AS (
    SELECT d.day, to_jsonb(d) AS j FROM health_store.rollup_day d WHERE d.person = p_person
  ),
  stored_coverings AS (
    SELECT c.uuid, c.type, jsonb_build_object('parts', c.parts, 'parts_total', c.parts_total, 'counted', c.counted,
                                              'coalesced', s.coalesced) AS j
    FROM health_store.coverings c
    LEFT JOIN health_store.sample_rows s ON s.person = c.person AND s.uuid = c.uuid
    WHERE c.person = p_person
    UNION ALL
    -- A sample flagged coalesced with no covering row.
    SELECT s.uuid, s.type, jsonb_build_object('coalesced', true)
    FROM health_store.samples s
    WHERE s.person = p_person AND s.coalesced
      AND NOT EXISTS (SELECT 1 FROM health_store.coverings c WHERE c.person = s.person AND c.uuid = s.uuid)
  ),
  calc_coverings AS (
    SELECT c.uuid, c.type, jsonb_build_object('parts', c.parts, 'parts_total', c.parts_total, 'counted', NOT x.coalescing,
                                              'coalesced', x.coalescing) AS j
    FROM unnest(v_coverings) c
    CROSS JOIN LATERAL (SELECT health_store.parts_add_up(c.value, c.parts, c.parts_total) AS coalescing) x
  ),
  calc_day AS (
    SELECT v.day, to_jsonb(v) AS j FROM health_store.calc_day v WHERE v.person = p_person
  ),
  -- The coalescing check's shortcut needs every key's frontier at or after its latest end.
  frontier_drift AS (
    SELECT k.type, k.source, jsonb_build_object('latest_end', f.latest_end) AS stored,
           jsonb_build_object('latest_end', k.latest_end) AS recomputed
    FROM (SELECT s.type, s.source, max(s.end_at) AS latest_end FROM health_store.live_samples s
          WHERE s.person = p_person AND s.type IN (SELECT t.type FROM health_store.total_types t)
          GROUP BY s.type, s.source) k
    LEFT JOIN health_store.key_frontiers f ON f.person = p_person AND f.type = k.type AND f.source = k.source
    WHERE f.latest_end IS NULL OR f.latest_end < k.latest_end
  )
  SELECT 'source', coalesce(a.day, b.day), coalesce(a.type, b.type), coalesce(a.source, b.source), a.j, b.j
  FROM stored_source a FULL JOIN calc_source b ON a.type = b.type AND a.day = b.day AND a.source = b.source
  WHERE a.j IS DISTINCT FROM b.j
  UNION ALL
  SELECT 'rank', x.day, x.type, x.source, x.stored, x.recomputed FROM rank_drift x
  UNION ALL
  SELECT 'day_type', coalesce(a.day, b.day), coalesce(a.type, b.type), NULL, a.j, b.j
  FROM stored_day_type a FULL JOIN calc_day_type b ON a.type = b.type AND a.day = b.day
  WHERE a.j IS DISTINCT FROM b.j
  UNION ALL
  SELECT 'day', coalesce(a.day, b.day), NULL, NULL, a.j, b.j
  FROM stored_day a FULL JOIN calc_day b ON a.day = b.day
  WHERE a.j IS DISTINCT FROM b.j
  UNION ALL
  SELECT 'coalescing', NULL, coalesce(a.type, b.type), coalesce(a.uuid, b.uuid)::text, a.j, b.j
  FROM stored_coverings a FULL JOIN calc_coverings b ON a.uuid = b.uuid
  WHERE a.j IS DISTINCT FROM b.j
  UNION ALL
  SELECT 'frontier', NULL, x.type, x.source, x.stored, x.recomputed FROM frontier_drift x
  ORDER BY 1, 2, 3, 4;
END
$$;

COMMENT ON FUNCTION health_store.verify_rollups(text) IS
  'Lists every difference between one person''s stored rollups and a recompute (level, key, stored row, recomputed row); no rows means they are equal.';

REVOKE EXECUTE ON FUNCTION
  health_store.flush_rollups(text),
  health_store.refresh_batch_rollups(text, health_store.rollup_key[], health_store.added_samples[]),
  health_store.refresh_day_types(text, health_store.rollup_key[]),
  health_store.refresh_person_derived(text, text),
  health_store.rebuild_rollups(text),
  health_store.after_migrate(),
  health_store.compact_samples(text),
  health_store.verify_rollups(text)
FROM PUBLIC;
