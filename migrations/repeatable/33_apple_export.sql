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
-- pushed copy, which carries Apple's own uuid, is the one kept, whichever arrived first.
-- incoming_samples finds each sample's twins; write_samples then
--
--   keeps an imported record with a pushed twin held   out: counted as matched, the twin
--                                                       brought back if it was marked deleted
--                                                       (revive_pushed_twins)
--   replaces the imported twins of a pushed sample      the imported rows deleted, their route
--                                                       moved to the pushed workout
--                                                       (drop_lower_twins)
--
-- Health Auto Export's points in time take part the same way, ranked between a pushed sample
-- and an imported record (health_store.origin_rank): healthd's or Stridee's twin of one is kept,
-- it replaces an imported record's.
--
-- and apply_sample_changes redoes their coverings and rollups. Both are cheap for a person who
-- never had the other kind: nothing is looked for.
--
-- Names. Either way, a twin tells what the export calls the pushed sample's source: the
-- export's sourceName ("Anna's Apple Watch") for healthd's bundle identifier
-- (com.apple.health.14452A08-…). note_source_names keeps it (health.sources shows it).
--
-- Repeatable file (docs/architecture.md, "Schema layout").

-- The earliest instant a person's pushed samples can start: the earliest window of their
-- healthd batches and Health Auto Export bodies (no sample of one starts before its
-- windowStart) and the earliest Stridee workout; NULL for someone who never pushed anything.
CREATE OR REPLACE FUNCTION health_store.pushed_from(p_person text) RETURNS timestamptz
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN least((SELECT min(d.window_start) FROM health_store.deliveries d WHERE d.person = p_person AND d.origin = 'http'),
               (SELECT min(d.window_start) FROM health_store.deliveries d WHERE d.person = p_person AND d.origin = 'file'),
               (SELECT min(d.window_start) FROM health_store.deliveries d WHERE d.person = p_person AND d.origin = 'hae'),
               (SELECT min(w.start_at) FROM health_store.stridee_workouts w WHERE w.person = p_person));
END
$$;

COMMENT ON FUNCTION health_store.pushed_from(text) IS
  'The earliest start a person''s pushed samples can have (their healthd batches'' and Health Auto Export bodies'' earliest windowStart, their earliest Stridee workout); NULL when they never pushed anything.';

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
  'Keeps, for each pushed source, the name an export''s twin record gives it (named_by export). Called by write_samples under the person lock.';

-- Brings back the given pushed samples of a person where they are marked deleted: an imported
-- record of the export being imported is a twin of each (write_samples), so Health holds them
-- after all. Returns what that changed. Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.revive_pushed_twins(p_person text, p_uuids uuid[])
RETURNS health_store.sample_changes
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF coalesce(cardinality(p_uuids), 0) = 0 THEN
    RETURN NULL;
  END IF;
  -- The mark's one writer (62_deletions.sql).
  RETURN health_store.set_deleted(p_person, p_uuids, NULL, NULL);
END
$$;

COMMENT ON FUNCTION health_store.revive_pushed_twins(text, uuid[]) IS
  'Clears the deletion mark of the given pushed samples of a person (an imported record is a twin of each); returns what that changed. Called by write_samples under the person lock.';

-- Before samples are written: deletes the held samples of ways in they win over that they are
-- twins of (the twins incoming_samples found: imported records, Health Auto Export points), moves
-- such a workout's route, streams and fill to the workout replacing it (unless that one has its
-- own; a Health Auto Export workout's own name, distance and energy become its fill:
-- workout_fills), and returns what leaving the held samples changed, the keys of the workouts
-- filled among it. Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.drop_lower_twins(p_person text, p_rows health_store.incoming_sample[])
RETURNS health_store.sample_changes
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_old    uuid[];
  v_new    uuid[];
  v_days   date[];
  v_series integer[];
  v_starts timestamptz[];
  v_ends   timestamptz[];
  v_filled uuid[];
BEGIN
  -- Each twin once, replaced by the least uuid of the samples it is.
  SELECT array_agg(p.old_uuid), array_agg(p.new_uuid) INTO v_old, v_new
  FROM (SELECT DISTINCT ON (t.uuid) t.uuid AS old_uuid, r.uuid AS new_uuid
        FROM unnest(p_rows) r CROSS JOIN LATERAL unnest(r.twins) AS t (uuid)
        ORDER BY t.uuid, r.uuid) p;
  IF v_old IS NULL THEN
    RETURN NULL;
  END IF;

  -- What a Health Auto Export workout replaced here brought, kept for the workout replacing it
  -- (unless that has a fill already): it lacks none of it now, and may lack it later.
  INSERT INTO health_store.workout_fills (person, uuid, activity_name, distance_m, energy_kcal)
  SELECT p_person, m.new_uuid, s.activity_name, s.distance_m, s.energy_kcal
  FROM unnest(v_old, v_new) AS m(old_uuid, new_uuid)
  JOIN health_store.sample_rows s ON s.person = p_person AND s.uuid = m.old_uuid
  WHERE s.origin = 'hae' AND s.kind = 'workout'
  ON CONFLICT (person, uuid) DO NOTHING;

  WITH gone AS (
    DELETE FROM health_store.sample_rows s
    WHERE s.person = p_person AND s.uuid = ANY (v_old)
    RETURNING s.day, s.series, s.start_at, s.end_at
  )
  SELECT array_agg(g.day), array_agg(g.series), array_agg(g.start_at), array_agg(g.end_at)
  INTO v_days, v_series, v_starts, v_ends
  FROM gone g;

  DELETE FROM health_store.coverings c WHERE c.person = p_person AND c.uuid = ANY (v_old);

  -- The replaced workout's route and streams now belong to the workout replacing it, unless
  -- that has its own.
  UPDATE health_store.workout_routes r SET uuid = m.new_uuid
  FROM unnest(v_old, v_new) AS m(old_uuid, new_uuid)
  WHERE r.person = p_person AND r.uuid = m.old_uuid
    AND NOT EXISTS (SELECT 1 FROM health_store.workout_routes o WHERE o.person = p_person AND o.uuid = m.new_uuid);
  DELETE FROM health_store.workout_routes r WHERE r.person = p_person AND r.uuid = ANY (v_old);
  UPDATE health_store.workout_streams s SET uuid = m.new_uuid
  FROM unnest(v_old, v_new) AS m(old_uuid, new_uuid)
  WHERE s.person = p_person AND s.uuid = m.old_uuid
    AND NOT EXISTS (SELECT 1 FROM health_store.workout_streams o
                    WHERE o.person = p_person AND o.uuid = m.new_uuid AND o.stream = s.stream);
  DELETE FROM health_store.workout_streams s WHERE s.person = p_person AND s.uuid = ANY (v_old);
  UPDATE health_store.workout_fills f SET uuid = m.new_uuid
  FROM unnest(v_old, v_new) AS m(old_uuid, new_uuid)
  WHERE f.person = p_person AND f.uuid = m.old_uuid
    AND NOT EXISTS (SELECT 1 FROM health_store.workout_fills o WHERE o.person = p_person AND o.uuid = m.new_uuid);
  DELETE FROM health_store.workout_fills f WHERE f.person = p_person AND f.uuid = ANY (v_old);

  -- A workout filled here has its key recomputed after it is written (its totals are not the
  -- batch's alone: merged, they would leave the fill out).
  SELECT array_agg(f.uuid) INTO v_filled
  FROM health_store.workout_fills f WHERE f.person = p_person AND f.uuid = ANY (v_new);
  RETURN health_store.changes_plus(
    health_store.changes_of_rows(p_person, v_days, v_series, v_starts, v_ends),
    (SELECT ROW(array_agg(DISTINCT ROW(r.day, r.type, r.source)::health_store.rollup_key), NULL, NULL, NULL,
                false)::health_store.sample_changes
     FROM unnest(p_rows) r WHERE r.uuid = ANY (v_filled) HAVING count(*) > 0));
END
$$;

COMMENT ON FUNCTION health_store.drop_lower_twins(text, health_store.incoming_sample[]) IS
  'Deletes the held samples of ways in that samples of a batch win over and are twins of (imported records, Health Auto Export points), moving their routes, streams and fills (a Health Auto Export workout''s own values becoming a fill), and returns what that changed. Called by write_samples under the person lock.';

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
  health_store.revive_pushed_twins(text, uuid[]),
  health_store.drop_lower_twins(text, health_store.incoming_sample[]),
  health_store.store_export_route(text, uuid, timestamptz, timestamptz, health_store.workout_route),
  health_store.store_activity_summaries(text, jsonb, timestamptz)
FROM PUBLIC;
