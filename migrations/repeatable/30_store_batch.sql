-- The write path, as stages, each taking the rows of the one before:
--
--   typed_samples         a batch's JSON read once into typed rows (also what a
--                         reconciliation stages: 62_deletions.sql)
--   incoming_samples      those rows with what is held under each uuid and each one's twins:
--                         held samples of another way in that are the same reading
--                         (health_store.is_twin), split by health_store.origin_rank into those
--                         the sample is (matches: it is not stored) and those it replaces (twins)
--   write_samples         inserts, replaces and revives them, drops the held samples a sample
--                         replaces (drop_lower_twins), brings back the samples one proves
--                         (revive_pushed_twins); returns the counts and what changed
--                         (health_store.sample_changes)
--   apply_sample_changes  the consequences, once, for every writer: the coalescing rule
--                         around the spans written, the rollups of the keys touched (now, or
--                         queued for flush_rollups when the caller groups batches), the
--                         person's newest sample end
--
-- store_samples runs them for any way in (healthd batches and the Health app's export through
-- store_batch, a Stridee workout's sample through store_workout, Health Auto Export's samples
-- through store_hae_samples and store_hae_workout: 37_hae.sql); the other writers of
-- health_store.sample_rows (mark_deleted, set_time_zone, a person's deletion) call
-- apply_sample_changes with what they changed; docs/architecture.md ("Who writes
-- health_store.samples") lists every writer, and SchemaLayoutTests holds that list to the
-- functions' own text. Everything runs in the caller's transaction under the person lock.
--
-- Repeatable file (docs/architecture.md, "Schema layout").

-- The samples of a batch, typed once: one pass over each sample's keys (jsonb_populate_record),
-- a uuid repeated in the batch once (the later copy), the day in the person's time zone (NULL:
-- the offset written), the payload each will store (health_store.compact_payload) and of an
-- imported record the members it shares with others (context_members) under their number
-- (context) and its creation date's seconds (created_s), which the export's mapping sent apart
-- (exportShared, exportContext, exportCreated). A pure
-- function of its arguments, the catalog among them (its caller reads health_store.catalog), so
-- that the planner inlines it into its caller's statement and Citus can plan that statement: a
-- SQL function that reads a table is refused there (docs/scaling.md).
--
-- p_samples  JSON array of sample objects in healthd's shape, validated by the caller, so
--            every cast below succeeds
-- p_tz       the person's time zone (NULL: the offset each sample was written with)
-- p_origin   where they came from: only Health Auto Export's samples carry Min and Max
--            (value_min, value_max), only the export's exportShared, exportContext and
--            exportCreated; a key of those names from another way in stays in the payload
-- p_types, p_kinds, p_rules, p_units  the catalog: each known type's kind, rule and unit (typed
--            columns only for a sample of its type's kind, a quantity in its type's unit)
DROP FUNCTION IF EXISTS health_store.typed_samples(jsonb, text, health_store.sample_origin, text[], text[], text[], text[]);
CREATE FUNCTION health_store.typed_samples(p_samples jsonb, p_tz text, p_origin health_store.sample_origin,
                                           p_types text[], p_kinds text[], p_rules text[], p_units text[])
RETURNS TABLE (uuid uuid, type text, source text, grp text, kind text, start_at timestamptz, end_at timestamptz,
               start_offset smallint, end_offset smallint, day date, value double precision, unit text,
               category_name text, activity_type integer, activity_name text, duration_s double precision,
               distance_m double precision, energy_kcal double precision, id text, payload jsonb,
               sent jsonb, rule text, value_min double precision, value_max double precision, context bigint,
               context_members jsonb, created_s integer)
LANGUAGE sql STABLE PARALLEL SAFE
-- A body parsed when it is made: the planner inlines it into the caller's statement (a set
-- function with a string body and a pinned search_path is a call of its own per batch, which
-- measured twice the cost of the query itself).
BEGIN ATOMIC
  WITH input AS (
    -- A quantity in another unit than its type's in the catalog is typed as a kind this version
    -- does not know is: its value would be summed and compared in the wrong unit.
    SELECT e.value AS s, e.ordinality AS pos, f.*, c.rule,
           CASE WHEN c.kind <> 'quantity' OR c.unit = f.unit THEN c.kind END AS catalog_kind,
           health_store.is_workout(c.rule, f.kind) AS workout
    FROM jsonb_array_elements(p_samples) WITH ORDINALITY AS e
    CROSS JOIN LATERAL jsonb_populate_record(NULL::health_store.sent_fields, e.value) AS f
    LEFT JOIN unnest(p_types, p_kinds, p_rules, p_units) AS c (type, kind, rule, unit) ON c.type = f.type
  ),
  latest AS (
    SELECT DISTINCT ON (i.uuid::uuid) * FROM input i ORDER BY i.uuid::uuid, i.pos DESC
  ),
  typed AS (
    -- Typed columns only for a known type of a known kind; the payload keeps the rest.
    SELECT x.*, x.uuid::uuid AS uuid_, x.start::timestamptz AS start_at, x."end"::timestamptz AS end_at,
           health_store.stamp_offset(x.start) AS start_offset, health_store.stamp_offset(x."end") AS end_offset,
           health_store.sample_day(x.start, x."end", x.rule, health_store.day_zone(p_origin, x.s, p_tz)) AS day,
           health_store.typed_value(x.catalog_kind, x.kind, x.value) AS value_,
           CASE WHEN x.catalog_kind = x.kind AND x.kind = 'quantity' THEN x.unit END AS unit_,
           CASE WHEN x.catalog_kind = x.kind AND x.kind = 'category' THEN x.name END AS category_name,
           CASE WHEN x.workout THEN x."activityType"::integer END AS activity_type,
           CASE WHEN x.workout THEN x."activityName" END AS activity_name,
           CASE WHEN x.workout THEN x."durationSeconds"::double precision END AS duration_s,
           CASE WHEN x.workout THEN x."distanceMeters"::double precision END AS distance_m,
           CASE WHEN x.workout THEN x."activeEnergyKilocalories"::double precision END AS energy_kcal,
           CASE WHEN p_origin = 'hae' AND x.catalog_kind = x.kind AND x.kind = 'quantity' THEN x."Min"::double precision END
             AS value_min,
           CASE WHEN p_origin = 'hae' AND x.catalog_kind = x.kind AND x.kind = 'quantity' THEN x."Max"::double precision END
             AS value_max,
           -- Read from the object of the export's records alone (keys of their own, not in
           -- sent_fields: every other sample's pass over its keys would look for them).
           CASE WHEN p_origin = 'export' THEN (x.s->>'exportContext')::bigint END AS context,
           CASE WHEN p_origin = 'export' THEN x.s->'exportShared' END AS context_members,
           CASE WHEN p_origin = 'export' THEN (x.s->>'exportCreated')::integer END AS created_s
    FROM latest x
    -- Computed once here: flattened into the caller, each column would be its expression again
    -- wherever it is read (the payload's compaction, the comparisons, the probes): measured
    -- 37 → 22 ms for 1,000 new samples.
    OFFSET 0
  )
  SELECT t.uuid_, t.type, t.source, t."group", t.kind, t.start_at, t.end_at, t.start_offset, t.end_offset,
         t.day, t.value_, t.unit_, t.category_name, t.activity_type, t.activity_name, t.duration_s, t.distance_m,
         t.energy_kcal, t.id,
         health_store.compact_payload(t.s, t.uuid, t.uuid_, t.start_offset, t.end_offset, t.value, t.value_, t.unit_,
                                      t.category_name, t."activityType", t.activity_type, t.activity_name,
                                      t."durationSeconds", t.duration_s, t."distanceMeters", t.distance_m,
                                      t."activeEnergyKilocalories", t.energy_kcal, t."Min", t.value_min, t."Max", t.value_max,
                                      t.context, t.created_s),
         t.s, t.rule, t.value_min, t.value_max, t.context, t.context_members, t.created_s
  FROM typed t;
END;

COMMENT ON FUNCTION health_store.typed_samples(jsonb, text, health_store.sample_origin, text[], text[], text[], text[]) IS
  'A batch''s samples read once into typed rows (a uuid repeated once, the later copy), with their day, the payload to store, the object as sent and an imported record''s shared members and creation date''s seconds.';

-- What writing does with one incoming sample: insert a new uuid; replace a held one whose
-- content differs, unless the held copy came from an origin that wins (origin_rank); revive a
-- held one marked deleted and received again unchanged (62_deletions.sql); nothing for the same
-- content again (a duplicate) or for a sample that is a held one of a way in that wins (matched).
CREATE OR REPLACE FUNCTION health_store.sample_action(held boolean, changed boolean, old_deleted boolean,
                                                      origin health_store.sample_origin,
                                                      old_origin health_store.sample_origin, matched boolean)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN matched THEN 'none'
            WHEN NOT held THEN 'insert'
            WHEN changed AND health_store.origin_rank(origin) >= health_store.origin_rank(old_origin) THEN 'replace'
            WHEN old_deleted THEN 'revive'
            ELSE 'none' END;

COMMENT ON FUNCTION health_store.sample_action(boolean, boolean, boolean, health_store.sample_origin, health_store.sample_origin, boolean) IS
  'What writing does with an incoming sample: insert, replace (a changed copy of an origin that does not lose), revive (a held one marked deleted, received again), or none (a duplicate, a matched record).';

-- Each sample of a batch of one person as the write path writes it: its typed row, what is
-- held under its uuid (whether it differs from what was sent), and its twins: held samples of
-- another way in that are the same reading (health_store.is_twin; healthd and Stridee, which
-- share Apple's uuids, are never each other's). Those of a way in that wins
-- (health_store.origin_rank) are `matches`: the sample is them and is not stored. Those of a
-- way in it wins over are `twins`: it replaces them. A summarized Health Auto Export bucket
-- (health_store.is_bucket) has none and is none. Twins are looked for only where there can be
-- any (p_look, and for an imported record only from where the person's pushed samples begin,
-- p_pushed_from). It reads the samples, so it is PL/pgSQL (a SQL function that reads a table
-- cannot be planned by Citus).
--
-- Three steps, each statement reading at most the person's tables beside a list
-- (docs/scaling.md): the held copies of the batch's uuids, by the primary key; the batch typed
-- and met with them, which reads no table (on Citus it is not deparsed and sent on with the
-- batch's JSON: measured); and, where twins can be, the twins of the typed rows. The rows come
-- back as one array, aggregated in the statement that makes them: returned as a set (RETURN
-- QUERY), they went through a tuplestore and were read back into the caller's array, 1.3 ms
-- more a 1000-sample batch (measured in serve; docs/architecture.md).
DROP FUNCTION IF EXISTS health_store.incoming_samples(text, jsonb, text, health_store.sample_origin, timestamptz, boolean);
CREATE FUNCTION health_store.incoming_samples(p_person text, p_samples jsonb, p_tz text,
                                              p_origin health_store.sample_origin,
                                              p_pushed_from timestamptz, p_look boolean)
RETURNS health_store.incoming_sample[]
LANGUAGE plpgsql STABLE
-- The typed rows meet the held ones by a hash of their uuids: the planner, which cannot know
-- how many rows a batch or its held copies have, would otherwise compare every pair (measured:
-- 1,000 × 1,000 comparisons, 110 ms for a batch sent again), or sort the typed rows again for
-- a merge (0.6 ms of a 1000-sample batch). Its laterals are nested loops whatever this says.
-- (Never JIT-compiled: the cost the planner gives a plan without nested loops makes it look
-- dear enough to compile, which took longer than running it: measured.)
SET enable_nestloop = off
SET enable_mergejoin = off
SET jit = off
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_types text[];
  v_kinds text[];
  v_rules text[];
  v_units text[];
  v_uuids uuid[];
  v_held  health_store.held_sample[];
  v_rows  health_store.incoming_sample[];
BEGIN
  SELECT array_agg(c.type), array_agg(c.kind), array_agg(c.rule), array_agg(c.unit) INTO v_types, v_kinds, v_rules, v_units
  FROM health_store.catalog c;
  -- The held row of each uuid with its series (validated by the caller: every uuid casts).
  v_uuids := ARRAY(SELECT (e->>'uuid')::uuid FROM jsonb_array_elements(p_samples) e);
  SELECT array_agg(ROW(r.uuid, r.origin, r.day, k.type IN (SELECT tt.type FROM health_store.total_types tt),
         r.deleted_at IS NOT NULL, k.type, k.source, r.grp, r.kind, r.id, r.start_at, r.end_at, r.start_offset,
         r.end_offset, r.value, r.unit, r.category_name, r.value_min, r.value_max, r.activity_type, r.activity_name,
         r.duration_s, r.distance_m, r.energy_kcal, r.payload, r.context, x.members, r.created_s)::health_store.held_sample)
  INTO v_held
  FROM health_store.sample_rows r
  -- Its series by the key (a hash of all the person's series per sample: measured).
  CROSS JOIN LATERAL (SELECT k.type, k.source FROM health_store.series k
                      WHERE k.person = p_person AND k.series = r.series LIMIT 1) k
  -- Its export context, if it names one (an imported record), by the key.
  LEFT JOIN LATERAL (SELECT x.members FROM health_store.export_contexts x
                     WHERE r.context IS NOT NULL AND x.person = p_person AND x.context = r.context LIMIT 1) x ON true
  WHERE r.person = p_person
    AND r.uuid = ANY (v_uuids);

  SELECT array_agg(ROW(t.uuid, t.type, t.source, t.grp, t.kind, t.start_at, t.end_at, t.start_offset, t.end_offset, t.day, t.value,
         t.unit, t.category_name, t.activity_type, t.activity_name, t.duration_s, t.distance_m, t.energy_kcal, t.id,
         t.payload, t.rule = 'total',
         o.uuid IS NOT NULL,
         c.changed,
         o.origin, o.day, o.type, o.source, o.start_at, o.end_at, o.is_total, coalesce(o.deleted, false),
         NULL, NULL,
         health_store.sample_action(o.uuid IS NOT NULL, c.changed, o.deleted, p_origin, o.origin, false),
         t.value_min, t.value_max, NULL, t.context, t.context_members, t.created_s)::health_store.incoming_sample)
  INTO v_rows
  FROM health_store.typed_samples(p_samples, p_tz, p_origin, v_types, v_kinds, v_rules, v_units) t
  LEFT JOIN unnest(v_held) o ON o.uuid = t.uuid
  -- Changed: the same stored columns and payload are the same sample again (compacting is a
  -- function of the sample); otherwise the held copy as sent is rebuilt and compared with the
  -- sample as sent (an imported record's rebuilt too: the mapping sent parts of it apart), so a
  -- copy compacted by an older rule is not taken for a new one.
  CROSS JOIN LATERAL (
    SELECT CASE WHEN o.uuid IS NULL THEN NULL
                WHEN (o.type, o.source, o.grp, o.kind, o.start_at, o.end_at, o.start_offset, o.end_offset, o.value,
                      o.unit, o.category_name, o.activity_type, o.activity_name, o.duration_s, o.distance_m,
                      o.energy_kcal, o.id, o.value_min, o.value_max, o.payload, o.context, o.created_s)
                     IS NOT DISTINCT FROM
                     (t.type, t.source, t.grp, t.kind, t.start_at, t.end_at, t.start_offset, t.end_offset, t.value,
                      t.unit, t.category_name, t.activity_type, t.activity_name, t.duration_s, t.distance_m,
                      t.energy_kcal, t.id, t.value_min, t.value_max, t.payload, t.context, t.created_s) THEN false
                ELSE health_store.full_payload(o.uuid, o.type, o.grp, o.source, o.kind, o.id, o.start_at, o.start_offset,
                                               o.end_at, o.end_offset, o.value, o.unit, o.category_name, o.activity_type,
                                               o.activity_name, o.duration_s, o.distance_m, o.energy_kcal, o.value_min,
                                               o.value_max, o.payload, o.members, o.created_s)
                     IS DISTINCT FROM
                     CASE WHEN t.context IS NULL AND t.created_s IS NULL THEN t.sent
                          ELSE health_store.full_payload(t.uuid, t.type, t.grp, t.source, t.kind, t.id, t.start_at,
                                                         t.start_offset, t.end_at, t.end_offset, t.value, t.unit,
                                                         t.category_name, t.activity_type, t.activity_name, t.duration_s,
                                                         t.distance_m, t.energy_kcal, t.value_min, t.value_max, t.payload,
                                                         t.context_members, t.created_s) END END AS changed
  ) c;
  IF p_look THEN
    v_rows := health_store.with_twins(p_person, v_rows, p_origin, p_pushed_from);
  END IF;
  RETURN coalesce(v_rows, '{}');
END
$$;

COMMENT ON FUNCTION health_store.incoming_samples(text, jsonb, text, health_store.sample_origin, timestamptz, boolean) IS
  'The samples of a batch of one person as the write path writes them: typed rows, the held copy of each uuid (and whether it differs), the held twins of another way in each one is (matches) and those it replaces (twins).';

-- The rows of incoming_samples with their twins (see there), by each series' start index (OFFSET
-- 0 keeps the probe a probe, whatever the statistics say); looked for only where there can be
-- any: an imported record only from where the person's pushed samples begin (p_pushed_from), no
-- summarized Health Auto Export bucket. A row's value as sent is its payload's where it has no
-- typed value (compact_payload keeps it then), which is all is_twin reads of it; the payload
-- keeps haeBucket. The sources are the names an export and a pushed sample give each other
-- (write_twins). A row with twins or matches is given them and its action again (the rest of it
-- as it is: jsonb_populate_record over the row); one with neither is left as it is.
CREATE OR REPLACE FUNCTION health_store.with_twins(p_person text, p_rows health_store.incoming_sample[],
                                                   p_origin health_store.sample_origin, p_pushed_from timestamptz)
RETURNS health_store.incoming_sample[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN ARRAY(
    SELECT CASE WHEN w.twins IS NULL AND w.matches IS NULL THEN t
                ELSE jsonb_populate_record(t, jsonb_build_object(
                       'twins', w.twins, 'matches', w.matches, 'twin_sources', w.sources,
                       'action', health_store.sample_action(t.held, t.changed, t.old_deleted, p_origin, t.old_origin,
                                                            w.matches IS NOT NULL))) END
    FROM unnest(p_rows) t
    CROSS JOIN LATERAL (
      SELECT array_agg(h.uuid ORDER BY h.uuid)
               FILTER (WHERE health_store.origin_rank(h.origin) < health_store.arriving_rank(p_origin, t.kind)) AS twins,
             array_agg(h.uuid ORDER BY h.uuid)
               FILTER (WHERE health_store.origin_rank(h.origin) > health_store.arriving_rank(p_origin, t.kind)) AS matches,
             array_agg(k.source ORDER BY h.uuid)
               FILTER (WHERE 'export' IN (h.origin, p_origin) AND 'hae' NOT IN (h.origin, p_origin)) AS sources
      FROM health_store.series k
      CROSS JOIN LATERAL (
        SELECT h.uuid, h.origin FROM health_store.sample_rows h
        WHERE h.person = p_person AND h.series = k.series
          AND h.origin <> p_origin AND NOT (h.origin IN ('healthd', 'stridee') AND p_origin IN ('healthd', 'stridee'))
          AND NOT health_store.is_bucket(h.origin, h.payload)
          AND health_store.is_twin(h.start_at, health_store.twin_end(h.origin, h.kind, h.end_at), h.value, h.payload->'value',
                                   t.start_at, health_store.twin_end(p_origin, t.kind, t.end_at), t.value, t.payload->'value')
        OFFSET 0) h
      WHERE (p_origin <> 'export' OR t.start_at > p_pushed_from - interval '1 second')
        AND NOT health_store.is_bucket(p_origin, t.payload)
        AND k.person = p_person AND k.type = t.type
    ) w);
END
$$;

COMMENT ON FUNCTION health_store.with_twins(text, health_store.incoming_sample[], health_store.sample_origin, timestamptz) IS
  'The rows of incoming_samples given their held twins of another way in: matches (a way in that wins: the sample is them) and twins (a way in it wins over: it replaces them), with their sources and the action again.';

-- Whether a person can hold twins of samples arriving from p_origin, by probes that cost next
-- to nothing: a pushed sample's (healthd, Stridee) are imported records and Health Auto Export's
-- points in time; Health Auto Export's are samples of any other way in. Imported records by the
-- person's export deliveries: each came in one (store_batch, origin export), and deliveries go
-- only with the person, so the answer is never no when there are some (an index of every
-- imported record answered it before, paid for by each: migration 0099). It may be yes when
-- there are none left (all replaced by pushed twins): then the twins are looked for and none
-- found, which is what a person still holding imported records pays anyway.
CREATE OR REPLACE FUNCTION health_store.may_hold_twins(p_person text, p_origin health_store.sample_origin)
RETURNS boolean
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF p_origin = 'hae' THEN
    RETURN EXISTS (SELECT 1 FROM health_store.deliveries d
                   WHERE d.person = p_person AND d.origin IN ('export', 'http', 'file'))
        OR EXISTS (SELECT 1 FROM health_store.stridee_workouts w WHERE w.person = p_person);
  END IF;
  RETURN EXISTS (SELECT 1 FROM health_store.deliveries d WHERE d.person = p_person AND d.origin = 'export')
      -- The expression of the partial index sample_rows_hae_points, so that the probe reads it.
      OR EXISTS (SELECT 1 FROM health_store.sample_rows s
                 WHERE s.person = p_person AND s.origin = 'hae' AND NOT coalesce(s.payload ? 'haeBucket', false));
END
$$;

COMMENT ON FUNCTION health_store.may_hold_twins(text, health_store.sample_origin) IS
  'Whether a person may hold twins of samples arriving from an origin (cheap probes): imported records or Health Auto Export points for a pushed sample, any other way''s samples for Health Auto Export''s.';

-- Numbers the (type, source) pairs of a batch's rows the person holds no series of yet, from
-- the person's highest. Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.add_series(p_person text, p_rows health_store.incoming_sample[]) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_held_types   text[];
  v_held_sources text[];
  v_types        text[];
  v_sources      text[];
  v_top          integer;
BEGIN
  -- The person's pairs (and highest number) read once, compared with the batch's in memory,
  -- inserted only when new (most batches bring none). On Citus a batch's rows beside the
  -- distributed table, or an insert of nothing, each cost 15–20 ms a batch.
  SELECT array_agg(k.type), array_agg(k.source), max(k.series) INTO v_held_types, v_held_sources, v_top
  FROM health_store.series k WHERE k.person = p_person;
  SELECT array_agg(n.type ORDER BY n.type COLLATE "C", n.source COLLATE "C"),
         array_agg(n.source ORDER BY n.type COLLATE "C", n.source COLLATE "C")
  INTO v_types, v_sources
  FROM (SELECT r.type, r.source FROM unnest(p_rows) r
        EXCEPT SELECT h.type, h.source FROM unnest(v_held_types, v_held_sources) h (type, source)) n;
  IF v_types IS NULL THEN
    RETURN;
  END IF;
  INSERT INTO health_store.series (person, series, type, source)
  SELECT p_person, coalesce(v_top, 0) + n.ord, n.type, n.source
  FROM unnest(v_types, v_sources) WITH ORDINALITY AS n (type, source, ord);
END
$$;

COMMENT ON FUNCTION health_store.add_series(text, health_store.incoming_sample[]) IS
  'Adds the series (type and source pairs) of a batch the person holds none of yet. Caller holds the person lock.';

-- Adds the export contexts (an imported record's shared healthExport members, under the number
-- the export's mapping gave them) of a batch's rows to be written that the person holds none of
-- yet. A set under the number of another the person holds (eight bytes of two SHA-256 alike) is
-- refused, the batch with it: never stored as the other. Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.add_contexts(p_person text, p_rows health_store.incoming_sample[]) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_numbers bigint[];
  v_members jsonb[];
BEGIN
  SELECT array_agg(n.context), array_agg(n.context_members) INTO v_numbers, v_members
  FROM (SELECT DISTINCT ON (r.context) r.context, r.context_members FROM unnest(p_rows) r
        WHERE r.context IS NOT NULL AND r.action IN ('insert', 'replace') ORDER BY r.context) n;
  IF EXISTS (SELECT 1 FROM unnest(v_numbers, v_members) n (context, members)
             JOIN health_store.export_contexts x ON x.person = p_person AND x.context = n.context
             WHERE x.members IS DISTINCT FROM n.members) THEN
    RAISE EXCEPTION 'two sets of shared healthExport members under one export context number' USING ERRCODE = 'data_exception';
  END IF;
  INSERT INTO health_store.export_contexts (person, context, members)
  SELECT p_person, n.context, n.members FROM unnest(v_numbers, v_members) n (context, members)
  ON CONFLICT (person, context) DO NOTHING;
END
$$;

COMMENT ON FUNCTION health_store.add_contexts(text, health_store.incoming_sample[]) IS
  'Adds the export contexts (shared healthExport members, under the number the export''s mapping gave them) of a batch''s rows to be written that the person holds none of yet; refuses two sets under one number. Caller holds the person lock.';

-- The twins of a batch's rows (incoming_samples found them): a sample that is a held sample of
-- a way in that wins (matches) is that sample (matched, and it brought back if it was marked
-- deleted); any other replaces the held samples of ways in it wins over that it is (twins).
-- Between an imported record and a pushed sample, the pushed sample's source learns the name the
-- export gives it. Returns how many were matched and what that changed. Caller holds the person
-- lock.
CREATE OR REPLACE FUNCTION health_store.write_twins(p_person text, p_rows health_store.incoming_sample[],
                                                    p_origin health_store.sample_origin,
                                                    OUT n_matched integer, OUT changes health_store.sample_changes)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_pushed   text[];
  v_named    text[];
  v_any_twin boolean;
BEGIN
  SELECT count(*) FILTER (WHERE r.matches IS NOT NULL), coalesce(bool_or(r.twins IS NOT NULL), false)
  INTO n_matched, v_any_twin FROM unnest(p_rows) r;
  -- Most batches have none (no other way in holds the person's samples): nothing more to do.
  -- (One pass over the rows for both.)
  IF n_matched = 0 AND NOT v_any_twin THEN
    RETURN;
  END IF;
  changes := health_store.changes_plus(
    health_store.revive_pushed_twins(p_person, ARRAY(SELECT DISTINCT m FROM unnest(p_rows) r, unnest(r.matches) m)),
    health_store.drop_lower_twins(p_person, ARRAY(SELECT r FROM unnest(p_rows) r WHERE r.matches IS NULL AND r.twins IS NOT NULL)));
  IF p_origin = 'export' THEN
    SELECT array_agg(u), array_agg(r.source) INTO v_pushed, v_named FROM unnest(p_rows) r, unnest(r.twin_sources) u;
  ELSE
    SELECT array_agg(r.source), array_agg(u) INTO v_pushed, v_named FROM unnest(p_rows) r, unnest(r.twin_sources) u;
  END IF;
  PERFORM health_store.note_source_names(p_person, v_pushed, v_named);
END
$$;

COMMENT ON FUNCTION health_store.write_twins(text, health_store.incoming_sample[], health_store.sample_origin) IS
  'Settles the twins of a batch of one person: samples matched by a held one of a way in that wins (brought back if marked deleted), held samples of ways in a sample wins over dropped, the names the export gives pushed sources; returns the matched count and what changed. Caller holds the person lock.';

-- Writes the rows of one batch of one person (health_store.incoming_samples') as
-- health_store.sample_action says; a sample that is a held sample of a way in that wins
-- (matches: an imported record a pushed sample is, a Health Auto Export point healthd sent) is
-- not written (matched, and that one brought back if it was marked deleted); any other first
-- drops the held samples of ways in it wins over that it is (twins). Returns the counts and what
-- changed. Caller holds the person lock.
--
-- Every writer of a person's samples holds that person's lock, so nobody else inserts this
-- person's uuids meanwhile: new ones are plain inserts and changed ones plain updates, which is
-- much cheaper than an INSERT … ON CONFLICT over the batch.
CREATE OR REPLACE FUNCTION health_store.write_samples(
  p_person text, p_rows health_store.incoming_sample[], p_origin health_store.sample_origin, p_received_at timestamptz,
  p_export uuid, OUT n_inserted integer, OUT n_replaced integer, OUT n_matched integer,
  OUT changes health_store.sample_changes)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_twins   record;
  v_replace uuid[];
  v_revive  uuid[];
BEGIN
  -- The twins first: what a matched sample proves exists, what a sample replaces.
  SELECT t.* INTO v_twins FROM health_store.write_twins(p_person, p_rows, p_origin) t;
  n_matched := v_twins.n_matched;

  -- Held uuids to update, as lists: they reach the primary key whatever the statistics say
  -- (joined, a planner that thinks the person has few samples scanned all of them per batch).
  SELECT array_agg(r.uuid) FILTER (WHERE r.action = 'replace'), array_agg(r.uuid) FILTER (WHERE r.action = 'revive')
  INTO v_replace, v_revive FROM unnest(p_rows) r;

  -- The writes, each its own statement (in one statement with writable CTEs, Citus ran every CTE
  -- as a subplan through intermediate results: 270 ms of a batch on a worker, docs/scaling.md);
  -- an update runs only when the batch has rows for it. The insert in no order: the rows come in
  -- the uuids' order already (typed_samples' DISTINCT ON); sorting them again cost 1.3 ms a
  -- 1000-sample batch. The person from the series row (p_person itself): Citus then runs the
  -- insert on the person's shard as one statement, not its rows pulled and copied in.
  INSERT INTO health_store.sample_rows AS n (
    person, uuid, start_at, end_at, value, first_received_at, last_received_at, export_id, series, day, origin,
    start_offset, end_offset, duration_s, distance_m, energy_kcal, activity_type, kind, grp, unit, category_name,
    activity_name, id, payload, value_min, value_max, context, created_s)
  SELECT k.person, x.uuid, x.start_at, x.end_at, x.value, p_received_at, p_received_at, p_export, k.series, x.day,
         p_origin, x.start_offset, x.end_offset, x.duration_s, x.distance_m, x.energy_kcal, x.activity_type, x.kind,
         x.grp, x.unit, x.category_name, x.activity_name, x.id, x.payload, x.value_min, x.value_max, x.context,
         x.created_s
  FROM unnest(p_rows) x
  JOIN health_store.series k ON k.person = p_person AND k.type = x.type AND k.source = x.source
  WHERE x.action = 'insert';
  GET DIAGNOSTICS n_inserted = ROW_COUNT;

  n_replaced := 0;
  IF v_replace IS NOT NULL THEN
    UPDATE health_store.sample_rows AS t SET
      start_at = x.start_at, end_at = x.end_at, value = x.value, last_received_at = p_received_at, export_id = p_export,
      series = k.series, day = x.day, origin = p_origin, start_offset = x.start_offset, end_offset = x.end_offset,
      duration_s = x.duration_s, distance_m = x.distance_m, energy_kcal = x.energy_kcal, activity_type = x.activity_type,
      kind = x.kind, grp = x.grp, unit = x.unit, category_name = x.category_name, activity_name = x.activity_name,
      id = x.id, payload = x.payload, value_min = x.value_min, value_max = x.value_max, context = x.context,
      created_s = x.created_s, deleted_at = NULL, deleted_by_export = NULL
    FROM unnest(p_rows) x
    JOIN health_store.series k ON k.person = p_person AND k.type = x.type AND k.source = x.source
    WHERE x.action = 'replace' AND t.person = p_person AND t.uuid = ANY (v_replace) AND t.uuid = x.uuid;
    GET DIAGNOSTICS n_replaced = ROW_COUNT;
  END IF;
  IF v_revive IS NOT NULL THEN
    UPDATE health_store.sample_rows AS t SET deleted_at = NULL, deleted_by_export = NULL
    FROM unnest(p_rows) x
    WHERE x.action = 'revive' AND t.person = p_person AND t.uuid = ANY (v_revive) AND t.uuid = x.uuid;
  END IF;

  changes := health_store.changes_of_written(p_rows, v_twins.changes);
END
$$;

COMMENT ON FUNCTION health_store.write_samples(text, health_store.incoming_sample[], health_store.sample_origin, timestamptz, uuid) IS
  'Inserts, replaces and revives the samples of one batch of one person as sample_action says (a sample that is a held sample of a way in that wins is matched; any other drops the held samples of ways it wins over that it is); returns the counts and what changed. Caller holds the person lock.';

-- What a batch's writes changed, from its rows (sample_action) and what its twins changed: keys
-- a replaced row left or joined and a revived one joined are recomputed, every other key merges
-- its inserted samples; spans of rule total written, old ones of replaced rows too; the latest
-- end inserted; whether the newest end may have moved back. PL/pgSQL, so that its plan is kept
-- for the session: a SQL function with a pinned search_path is planned again at every call
-- (0.36 ms of every batch).
CREATE OR REPLACE FUNCTION health_store.changes_of_written(p_rows health_store.incoming_sample[],
                                                           p_twins health_store.sample_changes)
RETURNS health_store.sample_changes
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN (
    WITH typed AS (SELECT r.* FROM unnest(p_rows) r),
    recompute AS (
      SELECT k.day, k.type, k.source FROM unnest(p_twins.keys) k
      UNION SELECT x.day, x.type, x.source FROM typed x WHERE x.action IN ('replace', 'revive')
      UNION SELECT x.old_day, x.old_type, x.old_source FROM typed x WHERE x.action = 'replace'
    ),
    spans AS (
      SELECT s.type, s.source, s.start_at, s.end_at FROM unnest(p_twins.spans) s
      UNION ALL SELECT x.type, x.source, x.start_at, x.end_at FROM typed x WHERE x.action <> 'none' AND x.is_total
      UNION ALL SELECT x.old_type, x.old_source, x.old_start_at, x.old_end_at FROM typed x WHERE x.action = 'replace' AND x.old_is_total
    )
    SELECT ROW(
      (SELECT array_agg(ROW(r.day, r.type, r.source)::health_store.rollup_key) FROM recompute r),
      (SELECT array_agg(ROW(g.day, g.type, g.source, g.samples)::health_store.added_samples)
       FROM (SELECT x.day, x.type, x.source,
                    array_agg(health_store.sample_facts_of(x.kind, x.value, x.start_at, x.end_at, x.uuid, x.activity_type,
                                                           x.duration_s, x.distance_m, x.energy_kcal, x.value_min,
                                                           x.value_max)) AS samples
             FROM typed x
             WHERE x.action = 'insert'
               AND NOT EXISTS (SELECT 1 FROM recompute r WHERE r.day = x.day AND r.type = x.type AND r.source = x.source)
             GROUP BY x.day, x.type, x.source) g),
      (SELECT array_agg(ROW(s.type, s.source, s.start_at, s.end_at)::health_store.span) FROM spans s),
      greatest(p_twins.newest, (SELECT max(x.end_at) FROM typed x WHERE x.action = 'insert')),
      coalesce(p_twins.newest_may_fall, false) OR EXISTS (SELECT 1 FROM typed x WHERE x.action IN ('replace', 'revive'))
    )::health_store.sample_changes);
END
$$;

COMMENT ON FUNCTION health_store.changes_of_written(health_store.incoming_sample[], health_store.sample_changes) IS
  'What a batch''s writes changed, from its rows as sample_action set them and what its twins changed: keys to recompute, samples added per key, spans of rule total, the latest end inserted, whether the newest end may have moved back.';

-- Two sets of changes as one (either may be NULL: nothing changed).
CREATE OR REPLACE FUNCTION health_store.changes_plus(a health_store.sample_changes, b health_store.sample_changes)
RETURNS health_store.sample_changes
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a
              ELSE ROW(a.keys || b.keys, a.added || b.added, a.spans || b.spans, greatest(a.newest, b.newest),
                       coalesce(a.newest_may_fall, false) OR coalesce(b.newest_may_fall, false))::health_store.sample_changes END
$$;

COMMENT ON FUNCTION health_store.changes_plus(health_store.sample_changes, health_store.sample_changes) IS
  'Two sets of changes of a person''s samples as one: keys, added samples and spans together, the later newest end, whether the newest end may have moved back.';

-- What samples leaving or joining the held ones changed (rows removed, marked, unmarked or
-- moved to another day; their day, series and span as they were): their keys are recomputed,
-- their spans of rule total decided again, and the newest end looked up.
CREATE OR REPLACE FUNCTION health_store.changes_of_rows(p_person text, p_days date[], p_series integer[],
                                                        p_starts timestamptz[], p_ends timestamptz[])
RETURNS health_store.sample_changes
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN (SELECT ROW(array_agg(DISTINCT ROW(r.day, k.type, k.source)::health_store.rollup_key),
                     NULL,
                     array_agg(ROW(k.type, k.source, r.start_at, r.end_at)::health_store.span) FILTER (WHERE t.type IS NOT NULL),
                     NULL,
                     count(*) > 0)::health_store.sample_changes
          FROM unnest(p_days, p_series, p_starts, p_ends) AS r (day, series, start_at, end_at)
          JOIN health_store.series k ON k.person = p_person AND k.series = r.series
          LEFT JOIN health_store.total_types t ON t.type = k.type);
END
$$;

COMMENT ON FUNCTION health_store.changes_of_rows(text, date[], integer[], timestamptz[], timestamptz[]) IS
  'What rows of a person leaving or joining the held samples changed (their days, series and spans as they were): keys to recompute, spans to decide again, the newest end to look up.';

-- The one step after any write of a person's samples: the coalescing rule decided again around
-- the spans written (a sample whose state flipped has its key recomputed instead of merged),
-- the person's newest sample end, then the rollups of every key touched — or, with p_defer (a
-- writer grouping several batches in one transaction), those queued for flush_rollups. The
-- newest end is never queued: new samples only move it on (one row updated), and the lookup
-- after anything else is needed only then (a flush that looked it up every time paid 81–95 ms
-- for it in each of an import's groups, where nothing had moved it back). Caller holds the
-- person lock.
CREATE OR REPLACE FUNCTION health_store.apply_sample_changes(p_person text, p_changes health_store.sample_changes,
                                                             p_defer boolean)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_keys    health_store.rollup_key[] := p_changes.keys;
  v_added   health_store.added_samples[] := p_changes.added;
  v_flipped health_store.rollup_key[];
BEGIN
  IF p_changes IS NULL THEN
    RETURN;
  END IF;
  v_flipped := health_store.refresh_coverings(p_person, p_changes.spans);
  IF v_flipped IS NOT NULL THEN
    v_keys := v_keys || v_flipped;
    v_added := ARRAY(SELECT a FROM unnest(v_added) a
                     WHERE NOT EXISTS (SELECT 1 FROM unnest(v_flipped) f
                                       WHERE f.day = a.day AND f.type = a.type AND f.source = a.source));
  END IF;

  -- New samples can only move the newest end on; anything else may move it back: looked up.
  IF p_changes.newest_may_fall THEN
    PERFORM health_store.note_newest_end(p_person);
  ELSIF p_changes.newest IS NOT NULL THEN
    UPDATE health_store.persons p SET newest_end_at = p_changes.newest
    WHERE p.person = p_person AND p_changes.newest > coalesce(p.newest_end_at, '-infinity');
  END IF;

  IF NOT p_defer THEN
    PERFORM health_store.refresh_batch_rollups(p_person, v_keys, v_added);
  ELSIF coalesce(cardinality(v_keys), 0) > 0 OR coalesce(cardinality(v_added), 0) > 0 THEN
    PERFORM health_store.defer_rollups(p_person, v_keys, v_added);
  END IF;
END
$$;

COMMENT ON FUNCTION health_store.apply_sample_changes(text, health_store.sample_changes, boolean) IS
  'After any write of a person''s samples: the coalescing rule around the spans written, the newest sample end and the rollups of the keys touched (or, with p_defer, the rollups queued for flush_rollups). Caller holds the person lock.';

-- Notes a person's newest sample end on their row (persons.newest_end_at) after their samples
-- changed. Caller holds the person lock.
--
-- Read without an index of every sample's end (keeping one cost each batch of new samples
-- 2.5 ms in 40, for this lookup alone): a sample of at most an hour ends within the hour after
-- it starts, so one that started over an hour before the person's latest start ends before that
-- sample ends and is never the newest. The newest end is the latest of the samples started in
-- the hour before the latest start (each series' latest start, then its samples since, by
-- sample_rows_series_start) and of the few longer ones (sample_rows_long_ends holds only their
-- ends). Only a sample ending before it starts can leave all of those before the latest start:
-- then every sample of the person is read.
--
-- Planned for each call (a plan cached while the person had few samples scanned them all once
-- they were many: 112 ms a batch at 300k samples).
CREATE OR REPLACE FUNCTION health_store.note_newest_end(p_person text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
  v_latest timestamptz;
  v_newest timestamptz;
BEGIN
  SELECT max(l.start_at) INTO v_latest
  FROM health_store.series k
  CROSS JOIN LATERAL (SELECT s.start_at FROM health_store.live_samples s
                      WHERE s.person = p_person AND s.series = k.series
                      ORDER BY s.start_at DESC LIMIT 1) l
  WHERE k.person = p_person;
  SELECT greatest(
           (SELECT max(r.end_at)
            FROM health_store.series k
            CROSS JOIN LATERAL (SELECT s.end_at FROM health_store.live_samples s
                                WHERE s.person = p_person AND s.series = k.series
                                  AND s.start_at >= v_latest - interval '1 hour') r
            WHERE k.person = p_person),
           (SELECT s.end_at FROM health_store.live_samples s
            WHERE s.person = p_person AND s.end_at - s.start_at > interval '1 hour'
            ORDER BY s.end_at DESC LIMIT 1))
  INTO v_newest;
  IF v_newest < v_latest THEN
    SELECT max(s.end_at) INTO v_newest FROM health_store.live_samples s WHERE s.person = p_person;
  END IF;
  UPDATE health_store.persons p SET newest_end_at = v_newest
  WHERE p.person = p_person AND p.newest_end_at IS DISTINCT FROM v_newest;
END
$$;

COMMENT ON FUNCTION health_store.note_newest_end(text) IS
  'Sets persons.newest_end_at of a person to the latest end of the samples held (deleted ones left out). Caller holds the person lock.';

-- Upserts samples of one person through the stages above; returns how many were inserted,
-- replaced and matched (an imported record a pushed sample already is); the rest are
-- duplicates. Caller holds the person lock (health_store.lock_person).
--
-- p_samples  JSON array of sample objects in healthd's shape, validated by the caller
-- p_origin   where they came from (health_store.origin_rank decides between copies)
-- p_export   the exportId the copies came with, if any
-- p_defer    true for a writer grouping batches: rollups wait for flush_rollups
CREATE OR REPLACE FUNCTION health_store.store_samples(
  p_person       text,
  p_samples      jsonb,
  p_origin       health_store.sample_origin,
  p_received_at  timestamptz,
  p_export       uuid,
  p_defer        boolean,
  OUT n_inserted integer,
  OUT n_replaced integer,
  OUT n_matched  integer
)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
-- Numbers compared as full_payload writes them (compact_payload, 10_rules.sql).
SET extra_float_digits = 1
-- Each statement planned once per session (and again whenever ANALYZE changes the tables'
-- statistics), for every function it calls too: the default kept planning the batch's reading
-- (incoming_samples) and the rollups' reads anew for every batch, because a plan made
-- for any batch looks dearer to the planner than one made for a given one — 4 ms of planning
-- a batch for that reading alone, more than its execution for a batch of 200 samples
-- (pg_stat_statements with track_planning; docs/benchmarks.md).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_tz       text;
  v_from     timestamptz;
  v_look     boolean := true;
  v_rows     health_store.incoming_sample[];
  v_written  record;
BEGIN
  -- Until the samples have statistics (autovacuum analyzes a new table within a minute or so),
  -- every statement of the batch is planned for it, with the tables as they are now: a plan
  -- cached while they were nearly empty took any index for a primary-key probe and read every
  -- sample of the person for each one once they were thousands (3 to 7 s a batch, measured).
  -- After that, cached plans are right and cost nothing to make again.
  IF (SELECT c.reltuples < 0 FROM pg_class c WHERE c.oid = 'health_store.sample_rows'::regclass) THEN
    PERFORM set_config('plan_cache_mode', 'force_custom_plan', true);
  -- Citus makes no generic plan of the batch's reading ("could not create distributed plan"):
  -- there the choice stays PostgreSQL's own.
  ELSIF EXISTS (SELECT 1 FROM pg_extension e WHERE e.extname = 'citus') THEN
    PERFORM set_config('plan_cache_mode', 'auto', true);
  END IF;
  SELECT s.time_zone INTO v_tz FROM health_store.settings s WHERE s.person = p_person;
  -- Twins are looked for only where they can be: a few index probes for a person who never
  -- used another way in, four aggregates for an import (an imported record's twins are pushed
  -- samples, none before the person's first push: none at all for one who never pushed).
  IF p_origin = 'export' THEN
    v_from := health_store.pushed_from(p_person);
    v_look := v_from IS NOT NULL;
  ELSE
    v_look := health_store.may_hold_twins(p_person, p_origin);
  END IF;

  v_rows := health_store.incoming_samples(p_person, p_samples, v_tz, p_origin, v_from, v_look);
  PERFORM health_store.add_series(p_person, v_rows);
  IF p_origin = 'export' THEN
    PERFORM health_store.add_contexts(p_person, v_rows);
  END IF;
  SELECT w.* INTO v_written FROM health_store.write_samples(p_person, v_rows, p_origin, p_received_at, p_export) w;
  n_inserted := v_written.n_inserted;
  n_replaced := v_written.n_replaced;
  n_matched := v_written.n_matched;
  PERFORM health_store.apply_sample_changes(p_person, v_written.changes, p_defer);
END
$$;

COMMENT ON FUNCTION health_store.store_samples(text, jsonb, health_store.sample_origin, timestamptz, uuid, boolean) IS
  'Upserts samples of one person on (person, uuid) (a copy of a winning origin is never replaced by another; twins of two ways in held once, the winning way''s) and keeps everything derived right; returns the inserted, replaced and matched counts. Caller holds the person lock.';

-- The origin a delivery's samples are stored with.
CREATE OR REPLACE FUNCTION health_store.sample_origin_of(origin health_store.delivery_origin)
RETURNS health_store.sample_origin
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE origin WHEN 'export' THEN 'export' WHEN 'hae' THEN 'hae' ELSE 'healthd' END::health_store.sample_origin;

COMMENT ON FUNCTION health_store.sample_origin_of(health_store.delivery_origin) IS
  'The origin of the samples of a delivery: export for the Health app''s export, hae for Health Auto Export, healthd for HTTP and backlog files.';

-- Notes that a person sent something, received at p_at: a delivery (p_delivery, from
-- record_delivery) or a Stridee workout or wellness push (p_delivery NULL: store_workout,
-- store_wellness). The one home of "when this person last sent something", which
-- health.freshness, GET /stats, person list and serve's metrics read: the latest receipt by
-- when it was received, whatever order the transactions commit in; the last batch is the
-- delivery of that receipt (none after a later Stridee push). p_offset, the UTC offset a
-- healthd batch's generatedAt was written in (its phone's), is kept from the latest receipt
-- that has one: "today" while no time zone is set (health_store.today_in). Caller holds the
-- person lock.
DROP FUNCTION IF EXISTS health_store.note_receipt(text, timestamptz, bigint);
CREATE OR REPLACE FUNCTION health_store.note_receipt(p_person text, p_at timestamptz, p_delivery bigint, p_offset smallint)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  UPDATE health_store.persons p SET
    last_delivery_id = CASE WHEN p_at >= coalesce(p.last_received_at, '-infinity') THEN p_delivery ELSE p.last_delivery_id END,
    sent_offset = CASE WHEN p_at >= coalesce(p.last_received_at, '-infinity') THEN coalesce(p_offset, p.sent_offset)
                       ELSE p.sent_offset END,
    last_received_at = greatest(p.last_received_at, p_at)
  WHERE p.person = p_person;
END
$$;

COMMENT ON FUNCTION health_store.note_receipt(text, timestamptz, bigint, smallint) IS
  'Notes on a person''s row that they sent something at an instant (a delivery, or a Stridee push: no delivery): persons.last_received_at, the latest receipt, last_delivery_id, its delivery if it was one, and sent_offset, the offset its phone wrote a healthd batch in. Caller holds the person lock.';

-- Records a delivery (an accepted request, a backlog file's batch, a batch of an export, a
-- Health Auto Export body) with its counts and its quarantined samples, and notes it as a
-- receipt of the person's (note_receipt); returns its id. What a delivery's envelope says comes as p_envelope (healthd's
-- keys: exportId, generatedAt, batchSequence, isFinalBatch, basis, windowStart, windowEnd,
-- occasionStart, occasionEnd). Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.record_delivery(
  p_person       text,
  p_origin       health_store.delivery_origin,
  p_format       text,
  p_file         text,
  p_envelope     jsonb,
  p_valid        integer,
  p_inserted     integer,
  p_replaced     integer,
  p_matched      integer,
  p_quarantine   jsonb,
  p_body_sha256  bytea,
  p_received_at  timestamptz
) RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_quarantined integer := jsonb_array_length(p_quarantine);
  v_delivery    bigint;
BEGIN
  INSERT INTO health_store.deliveries (
    person, received_at, origin, format, export_id, batch_sequence, is_final, basis,
    window_start, window_end, occasion_start, occasion_end, generated_at,
    samples, inserted, duplicates, replaced, quarantined, body_sha256, file, matched)
  VALUES (
    p_person, p_received_at, p_origin, p_format, (p_envelope->>'exportId')::uuid,
    (p_envelope->>'batchSequence')::integer, (p_envelope->>'isFinalBatch')::boolean,
    p_envelope->>'basis',
    (p_envelope->>'windowStart')::timestamptz, (p_envelope->>'windowEnd')::timestamptz,
    (p_envelope->>'occasionStart')::timestamptz, (p_envelope->>'occasionEnd')::timestamptz,
    (p_envelope->>'generatedAt')::timestamptz,
    p_valid + v_quarantined, p_inserted, p_valid - p_inserted - p_replaced - p_matched, p_replaced,
    v_quarantined, p_body_sha256, p_file, p_matched)
  RETURNING delivery_id INTO v_delivery;
  -- A healthd batch's generatedAt is written in its phone's offset (HTTP or a backlog file).
  PERFORM health_store.note_receipt(p_person, p_received_at, v_delivery,
                                    CASE WHEN p_origin IN ('http', 'file') THEN health_store.stamp_offset(p_envelope->>'generatedAt') END);

  -- An export's record is quarantined once per person however often it is read (its
  -- attributes' hash); a pushed sample once per delivery that carried it.
  INSERT INTO health_store.quarantine (person, delivery_id, position, reason, raw, raw_sha256)
  SELECT p_person, v_delivery, (q->>'position')::integer, q->>'reason', q->>'raw',
         CASE WHEN p_origin = 'export' THEN sha256(convert_to(q->>'raw', 'UTF8')) END
  FROM jsonb_array_elements(p_quarantine) AS q
  ON CONFLICT (person, raw_sha256) WHERE raw_sha256 IS NOT NULL DO NOTHING;
  RETURN v_delivery;
END
$$;

COMMENT ON FUNCTION health_store.record_delivery(text, health_store.delivery_origin, text, text, jsonb, integer, integer, integer, integer, jsonb, bytea, timestamptz) IS
  'Records a delivery with its envelope, counts and quarantined samples and notes it as a receipt of the person''s (note_receipt); returns its id. Caller holds the person lock.';

-- Stores one validated batch in the caller's transaction and returns its counts.
--
-- p_origin    where the batch came from: http, file (healthd backlog files), export (the
--             Health app's export); Health Auto Export's bodies go through store_hae_* (37_hae.sql)
-- p_envelope  the batch's envelope keys as sent (exportId, generatedAt, batchSequence,
--             isFinalBatch, basis, windowStart, windowEnd, occasionStart, occasionEnd)
-- p_samples   JSON array of the valid samples, each the exact object sent (or built from a
--             CSV row); validated by the caller, so every cast succeeds
-- p_quarantine JSON array of {position, reason, raw} for the samples that broke the contract
-- p_received_at when the batch was received (the caller's clock: every instant is a parameter)
-- p_credential true for the receiver: the person's credential is checked again under the
--             person lock (health_store.hold_person, SQLSTATE HW401 when it is gone), so one
--             statement both checks and stores
-- p_defer     true for a writer grouping batches in one transaction (flush_rollups before COMMIT)
CREATE OR REPLACE FUNCTION health_store.store_batch(
  p_person       text,
  p_origin       health_store.delivery_origin,
  p_credential   boolean,
  p_format       text,
  p_file         text,
  p_envelope     jsonb,
  p_samples      jsonb,
  p_quarantine   jsonb,
  p_body_sha256  bytea,
  p_received_at  timestamptz,
  p_defer        boolean
) RETURNS TABLE (samples integer, inserted integer, duplicates integer, replaced integer, quarantined integer,
                matched integer)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_valid       integer := jsonb_array_length(p_samples);
  v_quarantined integer := jsonb_array_length(p_quarantine);
  v_inserted    integer;
  v_replaced    integer;
  v_matched     integer;
  v_export      uuid := (p_envelope->>'exportId')::uuid;
BEGIN
  PERFORM health_store.hold_person(p_person, p_credential);

  SELECT s.n_inserted, s.n_replaced, s.n_matched INTO v_inserted, v_replaced, v_matched
  FROM health_store.store_samples(p_person, p_samples, health_store.sample_origin_of(p_origin), p_received_at, v_export,
                                  p_defer) s;

  PERFORM health_store.record_delivery(p_person, p_origin, p_format, p_file, p_envelope, v_valid, v_inserted, v_replaced,
                                       v_matched, p_quarantine, p_body_sha256, p_received_at);

  RETURN QUERY SELECT v_valid + v_quarantined, v_inserted, v_valid - v_inserted - v_replaced - v_matched,
                      v_replaced, v_quarantined, v_matched;
END
$$;

COMMENT ON FUNCTION health_store.store_batch(text, health_store.delivery_origin, boolean, text, text, jsonb, jsonb, jsonb, bytea, timestamptz, boolean) IS
  'Stores one validated healthd batch (samples upserted on person and uuid, a delivery row, quarantined samples, rollups of the touched days) in the caller''s transaction; returns its counts. An export''s records equal to a held pushed sample are not stored and are counted as matched.';

REVOKE EXECUTE ON FUNCTION
  health_store.typed_samples(jsonb, text, health_store.sample_origin, text[], text[], text[], text[]),
  health_store.incoming_samples(text, jsonb, text, health_store.sample_origin, timestamptz, boolean),
  health_store.with_twins(text, health_store.incoming_sample[], health_store.sample_origin, timestamptz),
  health_store.may_hold_twins(text, health_store.sample_origin),
  health_store.changes_plus(health_store.sample_changes, health_store.sample_changes),
  health_store.changes_of_written(health_store.incoming_sample[], health_store.sample_changes),
  health_store.add_series(text, health_store.incoming_sample[]),
  health_store.add_contexts(text, health_store.incoming_sample[]),
  health_store.write_twins(text, health_store.incoming_sample[], health_store.sample_origin),
  health_store.write_samples(text, health_store.incoming_sample[], health_store.sample_origin, timestamptz, uuid),
  health_store.changes_of_rows(text, date[], integer[], timestamptz[], timestamptz[]),
  health_store.apply_sample_changes(text, health_store.sample_changes, boolean),
  health_store.note_newest_end(text),
  health_store.store_samples(text, jsonb, health_store.sample_origin, timestamptz, uuid, boolean),
  health_store.note_receipt(text, timestamptz, bigint, smallint),
  health_store.record_delivery(text, health_store.delivery_origin, text, text, jsonb, integer, integer, integer, integer, jsonb, bytea, timestamptz),
  health_store.store_batch(text, health_store.delivery_origin, boolean, text, text, jsonb, jsonb, jsonb, bytea, timestamptz, boolean)
FROM PUBLIC;
