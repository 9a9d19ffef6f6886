-- The write path of the Health app's export (docs/apple-export.md): the twins rule, routes and
-- activity summaries. Records themselves are stored by store_batch (30_store_batch.sql) with
-- origin export, like any batch.
--
-- Twins. An imported record and a sample pushed by healthd or a Stridee body can be the same
-- reading: the export has no uuid of Apple's, so the record got a name-based one and the two
-- copies do not meet on (person, uuid). They are the same sample when type, start, end and
-- value agree, whatever the source is called (the export names the device, healthd the
-- bundle). The export writes whole seconds, healthd milliseconds: start and end agree when
-- they are less than a second apart (the rule: health_store.is_twin, 10_rules.sql). The
-- pushed copy, which carries Apple's own uuid, is the one kept, whichever arrived first:
--
--   an imported record with a pushed twin held      is not stored; counted as matched
--                                                   (drop_pushed_twins, called by store_batch)
--   a pushed sample with an imported twin held      replaces it: the imported row is deleted,
--                                                   its rollups and coverings redone, its route
--                                                   moved to the pushed workout
--                                                   (drop_export_twins, called by store_samples)
--
-- Both are cheap for a person who never had the other kind: one index probe decides there is
-- nothing to look for.
--
-- Names. Either way, a twin tells what the export calls the pushed sample's source: the
-- export's sourceName ("Anna's Apple Watch") for healthd's bundle identifier
-- (com.apple.health.14452A08-…). note_source_names keeps it (health.sources shows it).
--
-- Repeatable file (docs/architecture.md, "Schema layout").

-- The earliest instant a person's pushed samples can start: the earliest window of their
-- healthd batches (no sample of a batch starts before its windowStart) and the earliest
-- Stridee workout; NULL for someone who never pushed anything.
CREATE OR REPLACE FUNCTION health_store.pushed_from(p_person text) RETURNS timestamptz
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN least((SELECT min(d.window_start) FROM health_store.deliveries d WHERE d.person = p_person AND d.origin = 'http'),
               (SELECT min(d.window_start) FROM health_store.deliveries d WHERE d.person = p_person AND d.origin = 'file'),
               (SELECT min(w.start_at) FROM health_store.stridee_workouts w WHERE w.person = p_person));
END
$$;

COMMENT ON FUNCTION health_store.pushed_from(text) IS
  'The earliest start a person''s pushed samples can have (their healthd batches'' earliest windowStart, their earliest Stridee workout); NULL when they never pushed anything.';

-- The names an export's records give the sources of their pushed twins: each pushed source
-- with the export's name for it, kept as learned (named_by export) unless the same name; a
-- name the person set stays what is shown. Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.note_source_names(p_person text, p_sources text[], p_names text[]) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  INSERT INTO health_store.source_names AS n (person, source, named_by, name)
  SELECT DISTINCT ON (u.source) p_person, u.source, 'export', u.name
  FROM unnest(p_sources, p_names) AS u(source, name)
  WHERE u.source <> u.name AND u.name <> ''
  -- One name per source and call, the same whatever order the records came in.
  ORDER BY u.source, u.name COLLATE "C"
  ON CONFLICT ON CONSTRAINT source_names_pkey DO UPDATE SET name = excluded.name
  WHERE n.name IS DISTINCT FROM excluded.name;
END
$$;

COMMENT ON FUNCTION health_store.note_source_names(text, text[], text[]) IS
  'Keeps, for each pushed source, the name an export''s twin record gives it (named_by export). Called by drop_pushed_twins and drop_export_twins under the person lock.';

-- An import's batch without the records a pushed sample already holds (same type, span and
-- reading, any source), and how many those were. The samples are healthd-shaped objects
-- (store_batch's p_samples). Only records from where the person's pushed samples begin are
-- looked up, each by the sources that person has that type from on the days around it. The
-- pushed sample's source learns the record's name (note_source_names).
CREATE OR REPLACE FUNCTION health_store.drop_pushed_twins(p_person text, p_samples jsonb,
                                                          OUT samples jsonb, OUT matched integer)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_from    timestamptz := health_store.pushed_from(p_person);
  v_twins   bigint[];
  v_sources text[];
  v_names   text[];
BEGIN
  samples := p_samples;
  matched := 0;
  IF v_from IS NULL THEN
    RETURN;
  END IF;
  -- A pushed sample marked deleted that a record of this export is a twin of exists again
  -- (62_deletions.sql): brought back first, so it is found below like any other.
  PERFORM health_store.revive_pushed_twins(p_person, p_samples);
  WITH x AS (
    SELECT e.ordinality AS pos, e.value AS s, e.value->>'type' AS type,
           (e.value->>'start')::timestamptz AS start_at, (e.value->>'end')::timestamptz AS end_at,
           left(e.value->>'start', 10)::date AS start_day, left(e.value->>'end', 10)::date AS end_day,
           health_store.typed_value(c.kind, e.value->>'kind', e.value->>'value') AS value
    FROM jsonb_array_elements(p_samples) WITH ORDINALITY AS e
    LEFT JOIN health_store.catalog c ON c.type = e.value->>'type'
  )
  , t AS (
    SELECT x.pos, x.s->>'source' AS name, (
             SELECT h.source
             FROM health_store.rollup_source r
             JOIN health_store.samples h ON h.person = r.person AND h.type = r.type AND h.source = r.source
             WHERE r.person = p_person AND r.type = x.type AND r.day BETWEEN x.start_day - 1 AND x.end_day + 1
               AND h.origin <> 'export'
               AND health_store.is_twin(h.start_at, h.end_at, h.value, h.payload->'value',
                                        x.start_at, x.end_at, x.value, x.s->'value')
             LIMIT 1) AS held_source
    FROM x
    WHERE x.start_at > v_from - interval '1 second'
  )
  SELECT array_agg(t.pos), array_agg(t.held_source), array_agg(t.name) INTO v_twins, v_sources, v_names
  FROM t WHERE t.held_source IS NOT NULL;
  IF v_twins IS NULL THEN
    RETURN;
  END IF;
  matched := cardinality(v_twins);
  PERFORM health_store.note_source_names(p_person, v_sources, v_names);
  SELECT coalesce(jsonb_agg(e.value ORDER BY e.ordinality), '[]'::jsonb) INTO samples
  FROM jsonb_array_elements(p_samples) WITH ORDINALITY AS e
  WHERE e.ordinality <> ALL (v_twins);
END
$$;

COMMENT ON FUNCTION health_store.drop_pushed_twins(text, jsonb) IS
  'The samples of an import''s batch without those a held healthd or Stridee sample already is (same type, span to the second, reading), and how many were dropped. Called by store_batch for origin export.';

-- Brings back the person's pushed samples marked deleted that a record of an import's batch is
-- a twin of, with their coalescing rule and rollups. Marked samples are few: they are read
-- through their own index, and nothing is done for a person who has none.
CREATE OR REPLACE FUNCTION health_store.revive_pushed_twins(p_person text, p_samples jsonb) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_uuids uuid[];
BEGIN
  IF NOT EXISTS (SELECT 1 FROM health_store.samples s WHERE s.person = p_person AND s.deleted_at IS NOT NULL) THEN
    RETURN;
  END IF;
  WITH x AS (
    SELECT e.value->>'type' AS type, (e.value->>'start')::timestamptz AS start_at, (e.value->>'end')::timestamptz AS end_at,
           health_store.typed_value(c.kind, e.value->>'kind', e.value->>'value') AS value, e.value->'value' AS payload_value
    FROM jsonb_array_elements(p_samples) AS e
    LEFT JOIN health_store.catalog c ON c.type = e.value->>'type'
  )
  SELECT array_agg(DISTINCT h.uuid) INTO v_uuids
  FROM health_store.samples h
  JOIN x ON h.type = x.type
  WHERE h.person = p_person AND h.deleted_at IS NOT NULL AND h.origin <> 'export'
    AND health_store.is_twin(h.start_at, h.end_at, h.value, h.payload->'value', x.start_at, x.end_at, x.value, x.payload_value);
  -- The mark's one writer (62_deletions.sql) clears it and redoes coverings and rollups.
  PERFORM health_store.mark_deleted(p_person, v_uuids, NULL, NULL);
END
$$;

COMMENT ON FUNCTION health_store.revive_pushed_twins(text, jsonb) IS
  'Brings back (unmarks) the person''s pushed samples marked deleted that a record of an import''s batch is a twin of, and redoes their rollups. Called by drop_pushed_twins under the person lock.';

-- Before pushed samples are stored: deletes the imported samples they are twins of, keeps the
-- rollups and coverings of what was deleted right, and moves an imported workout's route to the
-- pushed workout (unless that one has a route of its own). Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.drop_export_twins(p_person text, p_samples jsonb) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_old     uuid[];
  v_new     uuid[];
  v_sources text[];
  v_names   text[];
  v_keys    health_store.rollup_key[];
  v_spans   health_store.span[];
BEGIN
  -- One probe of the partial index: nothing to do for a person who never imported.
  IF NOT EXISTS (SELECT 1 FROM health_store.samples s WHERE s.person = p_person AND s.origin = 'export') THEN
    RETURN;
  END IF;

  WITH x AS (
    SELECT e.value AS s, (e.value->>'uuid')::uuid AS uuid, e.value->>'type' AS type,
           (e.value->>'start')::timestamptz AS start_at, (e.value->>'end')::timestamptz AS end_at,
           health_store.typed_value(c.kind, e.value->>'kind', e.value->>'value') AS value
    FROM jsonb_array_elements(p_samples) AS e
    LEFT JOIN health_store.catalog c ON c.type = e.value->>'type'
  )
  SELECT array_agg(t.old_uuid), array_agg(t.new_uuid), array_agg(t.pushed_source), array_agg(t.name)
  INTO v_old, v_new, v_sources, v_names
  FROM (
    SELECT DISTINCT ON (h.uuid) h.uuid AS old_uuid, x.uuid AS new_uuid, x.s->>'source' AS pushed_source, h.source AS name
    FROM x
    JOIN health_store.samples h
      ON h.person = p_person AND h.origin = 'export' AND h.type = x.type
     AND health_store.is_twin(h.start_at, h.end_at, h.value, h.payload->'value', x.start_at, x.end_at, x.value, x.s->'value')
    ORDER BY h.uuid, x.uuid
  ) t;
  IF v_old IS NULL THEN
    RETURN;
  END IF;
  PERFORM health_store.note_source_names(p_person, v_sources, v_names);

  WITH gone AS (
    DELETE FROM health_store.samples s
    WHERE s.person = p_person AND s.uuid = ANY (v_old)
    RETURNING s.day, s.type, s.source, s.start_at, s.end_at
  )
  SELECT (SELECT array_agg(DISTINCT ROW(g.day, g.type, g.source)::health_store.rollup_key) FROM gone g),
         (SELECT array_agg(ROW(g.type, g.source, g.start_at, g.end_at)::health_store.span) FROM gone g
          WHERE g.type IN (SELECT t.type FROM health_store.total_types t))
  INTO v_keys, v_spans;

  DELETE FROM health_store.coverings c WHERE c.person = p_person AND c.uuid = ANY (v_old);

  -- The imported workout's route now belongs to the pushed workout, unless that has its own.
  UPDATE health_store.workout_routes r SET uuid = m.new_uuid
  FROM unnest(v_old, v_new) AS m(old_uuid, new_uuid)
  WHERE r.person = p_person AND r.uuid = m.old_uuid
    AND NOT EXISTS (SELECT 1 FROM health_store.workout_routes o WHERE o.person = p_person AND o.uuid = m.new_uuid);
  DELETE FROM health_store.workout_routes r WHERE r.person = p_person AND r.uuid = ANY (v_old);

  -- What the deleted samples covered or were part of is decided again; their keys, and the
  -- keys whose coalescing changed, are recomputed from the samples left.
  IF v_spans IS NOT NULL THEN
    v_keys := v_keys || health_store.refresh_coverings(p_person, v_spans);
  END IF;
  PERFORM health_store.refresh_batch_rollups(p_person, v_keys, NULL);
END
$$;

COMMENT ON FUNCTION health_store.drop_export_twins(text, jsonb) IS
  'Deletes the imported samples that the given pushed samples are twins of (same type, span to the second, reading), with their rollups, coverings and route kept right, and notes the export''s name of each pushed source. Called by store_samples for origins healthd and stridee, under the person lock.';

-- The route of an imported workout, stored under the workout it belongs to: the imported one,
-- or the pushed twin it matched (a workout of the same span), unless that pushed workout has a
-- route of its own. Returns whether a route was stored. Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.store_export_route(p_person text, p_uuid uuid, p_start timestamptz, p_end timestamptz,
                                                           p_route health_store.workout_route)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_target uuid;
BEGIN
  IF coalesce(cardinality(p_route.t), 0) = 0 THEN
    RETURN false;
  END IF;
  SELECT s.uuid INTO v_target FROM health_store.samples s WHERE s.person = p_person AND s.uuid = p_uuid;
  IF v_target IS NULL THEN
    SELECT w.uuid INTO v_target
    FROM health_store.workout_samples w
    WHERE w.person = p_person AND w.origin <> 'export' AND w.kind = 'workout'
      -- A workout's twin: the same span (workouts carry no typed value).
      AND health_store.is_twin(w.start_at, w.end_at, NULL, NULL, p_start, p_end, NULL, NULL)
    ORDER BY w.uuid
    LIMIT 1;
    IF v_target IS NULL
       OR EXISTS (SELECT 1 FROM health_store.workout_routes r
                  WHERE r.person = p_person AND r.uuid = v_target AND r.origin <> 'export') THEN
      RETURN false;
    END IF;
  END IF;
  PERFORM health_store.store_route(p_person, v_target, 'export', p_route);
  RETURN true;
END
$$;

COMMENT ON FUNCTION health_store.store_export_route(text, uuid, timestamptz, timestamptz, health_store.workout_route) IS
  'Stores an imported workout''s route under that workout, or under the pushed workout it matched when that has no route of its own; returns whether it was stored. Caller holds the person lock.';

-- Upserts activity summaries of a person, one per day (the later of two for a day in one call
-- wins); returns how many were given. p_items: [{day, active_energy_kcal, …, summary}].
CREATE OR REPLACE FUNCTION health_store.store_activity_summaries(p_person text, p_items jsonb,
                                                                 p_received_at timestamptz)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  INSERT INTO health_store.activity_summaries AS a (
    person, day, active_energy_kcal, active_energy_goal_kcal, exercise_min, exercise_goal_min,
    stand_hours, stand_goal_hours, summary, first_received_at, last_received_at)
  SELECT DISTINCT ON ((e.value->>'day')::date)
         p_person, (e.value->>'day')::date, (e.value->>'active_energy_kcal')::double precision,
         (e.value->>'active_energy_goal_kcal')::double precision, (e.value->>'exercise_min')::double precision,
         (e.value->>'exercise_goal_min')::double precision, (e.value->>'stand_hours')::double precision,
         (e.value->>'stand_goal_hours')::double precision, e.value->'summary', p_received_at, p_received_at
  FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e
  ORDER BY (e.value->>'day')::date, e.ordinality DESC
  ON CONFLICT (person, day) DO UPDATE SET
    active_energy_kcal = excluded.active_energy_kcal, active_energy_goal_kcal = excluded.active_energy_goal_kcal,
    exercise_min = excluded.exercise_min, exercise_goal_min = excluded.exercise_goal_min,
    stand_hours = excluded.stand_hours, stand_goal_hours = excluded.stand_goal_hours,
    summary = excluded.summary, last_received_at = excluded.last_received_at
  WHERE a.summary IS DISTINCT FROM excluded.summary;
  RETURN jsonb_array_length(p_items);
END
$$;

COMMENT ON FUNCTION health_store.store_activity_summaries(text, jsonb, timestamptz) IS
  'Upserts a person''s activity summaries on (person, day) from [{day, active_energy_kcal, active_energy_goal_kcal, exercise_min, exercise_goal_min, stand_hours, stand_goal_hours, summary}]; returns how many were given.';

REVOKE EXECUTE ON FUNCTION
  health_store.note_source_names(text, text[], text[]),
  health_store.pushed_from(text),
  health_store.revive_pushed_twins(text, jsonb),
  health_store.drop_pushed_twins(text, jsonb),
  health_store.drop_export_twins(text, jsonb),
  health_store.store_export_route(text, uuid, timestamptz, timestamptz, health_store.workout_route),
  health_store.store_activity_summaries(text, jsonb, timestamptz)
FROM PUBLIC;
