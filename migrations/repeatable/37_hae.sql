-- The write path of Health Auto Export (docs/health-auto-export.md): a body decoded by
-- HAEDecoder is stored in one transaction by the calls below, each under the person lock:
--
--   store_hae_samples   a chunk of its metric samples (healthd-shaped objects) through
--                       store_samples, origin hae: the one road every way in takes
--   store_hae_workout   one workout: its sample through store_samples, then its streams and
--                       route on the workout it is held as (its own, or the healthd, Stridee or
--                       export workout it is a twin of: what that one lacks is filled, nothing
--                       of it overwritten)
--   store_hae_delivery  the delivery row (origin hae, an exportId of the body's hash, so a
--                       retried body is one run), its quarantine, and the other arrays' items
--
-- The caller defers the rollups (p_defer) and flushes them once before its commit.
--
-- Repeatable file (docs/architecture.md, "Schema layout").

-- Stores a chunk of a body's metric samples (validated by the decoder); returns what
-- store_samples counted. p_export is the body's exportId (store_hae_delivery's too).
CREATE OR REPLACE FUNCTION health_store.store_hae_samples(p_person text, p_credential boolean, p_samples jsonb, p_export uuid,
                                                          p_received_at timestamptz, p_defer boolean,
                                                          OUT n_inserted integer, OUT n_replaced integer, OUT n_matched integer)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  PERFORM health_store.hold_person(p_person, p_credential);
  SELECT s.n_inserted, s.n_replaced, s.n_matched INTO n_inserted, n_replaced, n_matched
  FROM health_store.store_samples(p_person, p_samples, 'hae', p_received_at, p_export, p_defer) s;
END
$$;

COMMENT ON FUNCTION health_store.store_hae_samples(text, boolean, jsonb, uuid, timestamptz, boolean) IS
  'Stores a chunk of a Health Auto Export body''s metric samples through store_samples (origin hae); returns the inserted, replaced and matched counts.';

-- What a Health Auto Export workout brings to the held workout of another way in that it is
-- (p_target): its activity name, distance and energy kept in workout_fills (replacing what an
-- earlier copy of it brought), read wherever the held workout has none of its own; the held
-- workout's rollup key recomputed (queued with p_defer) when the fill gives it a total it
-- lacked. Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.fill_workout(p_person text, p_target uuid, p_name text, p_distance_m double precision,
                                                     p_energy_kcal double precision, p_defer boolean)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_held health_store.sample_rows;
BEGIN
  INSERT INTO health_store.workout_fills AS f (person, uuid, activity_name, distance_m, energy_kcal)
  VALUES (p_person, p_target, p_name, p_distance_m, p_energy_kcal)
  ON CONFLICT (person, uuid) DO UPDATE SET activity_name = excluded.activity_name, distance_m = excluded.distance_m,
                                           energy_kcal = excluded.energy_kcal;
  SELECT s.* INTO v_held FROM health_store.sample_rows s WHERE s.person = p_person AND s.uuid = p_target;
  IF v_held.distance_m IS NULL OR v_held.energy_kcal IS NULL THEN
    PERFORM health_store.apply_sample_changes(
      p_person, health_store.changes_of_rows(p_person, ARRAY[v_held.day], ARRAY[v_held.series], ARRAY[v_held.start_at],
                                             ARRAY[v_held.end_at]),
      p_defer);
  END IF;
END
$$;

COMMENT ON FUNCTION health_store.fill_workout(text, uuid, text, double precision, double precision, boolean) IS
  'Keeps what a Health Auto Export workout brings to the held workout of another way in it is (activity name, distance, energy: workout_fills, read where the held one has none) and recomputes that workout''s rollup key when it lacked a total. Caller holds the person lock.';

-- Stores one workout of a body: its sample (healthd's shape, validated by the decoder) through
-- store_samples, then its streams and route on the workout it is held as. That is its own uuid
-- (as Health Auto Export's copy, or as a copy of a way in that wins, healthd's), else the
-- workout of another way in it is a twin of (same span to the second). Held as another way's
-- workout, its name, distance and energy fill what that one lacks (fill_workout). On a workout that is
-- Health Auto Export's own or has no Stridee body, its streams replace those held; otherwise
-- (a Stridee body's) only a stream the workout lacks is added. Its route replaces a route of
-- its own, fills a workout without one, and never replaces another way's.
CREATE OR REPLACE FUNCTION health_store.store_hae_workout(p_person text, p_credential boolean, p_sample jsonb,
                                                          p_streams health_store.workout_stream[],
                                                          p_route health_store.workout_route, p_export uuid,
                                                          p_received_at timestamptz, p_defer boolean,
                                                          OUT n_inserted integer, OUT n_replaced integer, OUT n_matched integer)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_uuid   uuid := (p_sample->>'uuid')::uuid;
  v_target uuid;
  v_origin health_store.sample_origin;
BEGIN
  PERFORM health_store.hold_person(p_person, p_credential);
  SELECT s.n_inserted, s.n_replaced, s.n_matched INTO n_inserted, n_replaced, n_matched
  FROM health_store.store_samples(p_person, jsonb_build_array(p_sample), 'hae', p_received_at, p_export, p_defer) s;

  SELECT s.uuid, s.origin INTO v_target, v_origin FROM health_store.sample_rows s WHERE s.person = p_person AND s.uuid = v_uuid;
  IF v_target IS NULL THEN
    SELECT w.uuid, w.origin INTO v_target, v_origin
    FROM health_store.workout_samples w
    WHERE w.person = p_person AND w.origin <> 'hae'
      AND health_store.is_twin(w.start_at, w.end_at, NULL, NULL, (p_sample->>'start')::timestamptz,
                               (p_sample->>'end')::timestamptz, NULL, NULL)
    ORDER BY w.uuid
    LIMIT 1;
  END IF;
  IF v_target IS NULL THEN
    RETURN;
  END IF;
  IF v_origin <> 'hae' THEN
    PERFORM health_store.fill_workout(p_person, v_target, p_sample->>'activityName',
                                      (p_sample->>'distanceMeters')::double precision,
                                      (p_sample->>'activeEnergyKilocalories')::double precision, p_defer);
  END IF;

  -- A Stridee body's own streams are never overwritten (two statements: Citus cannot send a
  -- subquery in ON CONFLICT's WHERE to the worker with its parameters typed).
  IF EXISTS (SELECT 1 FROM health_store.stridee_workouts b WHERE b.person = p_person AND b.uuid = v_target) THEN
    INSERT INTO health_store.workout_streams (person, uuid, stream, t, v)
    SELECT p_person, v_target, s.stream, s.t, s.v FROM unnest(p_streams) s WHERE coalesce(cardinality(s.t), 0) > 0
    ON CONFLICT (person, uuid, stream) DO NOTHING;
  ELSE
    INSERT INTO health_store.workout_streams (person, uuid, stream, t, v)
    SELECT p_person, v_target, s.stream, s.t, s.v FROM unnest(p_streams) s WHERE coalesce(cardinality(s.t), 0) > 0
    ON CONFLICT (person, uuid, stream) DO UPDATE SET t = excluded.t, v = excluded.v;
  END IF;

  IF coalesce(cardinality(p_route.t), 0) > 0
     AND NOT EXISTS (SELECT 1 FROM health_store.workout_routes r
                     WHERE r.person = p_person AND r.uuid = v_target AND r.origin <> 'hae') THEN
    PERFORM health_store.store_route(p_person, v_target, 'hae', p_route);
  END IF;
END
$$;

COMMENT ON FUNCTION health_store.store_hae_workout(text, boolean, jsonb, health_store.workout_stream[], health_store.workout_route, uuid, timestamptz, boolean) IS
  'Stores one Health Auto Export workout (its sample through store_samples) and its streams and route on the workout it is held as: its own, or its twin of another way in, whose own streams and route are never overwritten; returns the inserted, replaced and matched counts.';

-- Records a body as a delivery (origin hae, format json): an exportId of the body (p_export)
-- with one batch, final, basis hae, its window the earliest start and latest end it holds (the
-- time it arrived when it holds nothing); its counts, totalled by the caller over its chunks
-- and workouts, and its quarantine. Keeps the items of its other arrays (p_records:
-- [{kind, item}]), an item held already once. Returns the delivery's id.
CREATE OR REPLACE FUNCTION health_store.store_hae_delivery(
  p_person       text,
  p_credential   boolean,
  p_origin       health_store.delivery_origin,
  p_file         text,
  p_export       uuid,
  p_window_start timestamptz,
  p_window_end   timestamptz,
  p_valid        integer,
  p_inserted     integer,
  p_replaced     integer,
  p_matched      integer,
  p_quarantine   jsonb,
  p_records      jsonb,
  p_body_sha256  bytea,
  p_received_at  timestamptz
) RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_envelope jsonb := jsonb_build_object(
    'exportId', p_export, 'generatedAt', p_received_at, 'batchSequence', 1, 'isFinalBatch', true, 'basis', 'hae',
    'windowStart', coalesce(p_window_start, p_received_at), 'windowEnd', coalesce(p_window_end, p_received_at),
    'occasionStart', coalesce(p_window_start, p_received_at), 'occasionEnd', coalesce(p_window_end, p_received_at));
BEGIN
  PERFORM health_store.hold_person(p_person, p_credential);
  INSERT INTO health_store.hae_records AS h (person, kind, item_sha256, received_at, item)
  SELECT p_person, r.value->>'kind', sha256(convert_to((r.value->'item')::text, 'UTF8')), p_received_at, r.value->'item'
  FROM jsonb_array_elements(p_records) AS r
  ON CONFLICT (person, kind, item_sha256) DO NOTHING;
  RETURN health_store.record_delivery(p_person, p_origin, 'json', p_file, v_envelope, p_valid, p_inserted, p_replaced, p_matched,
                                      p_quarantine, p_body_sha256, p_received_at);
END
$$;

COMMENT ON FUNCTION health_store.store_hae_delivery(text, boolean, health_store.delivery_origin, text, uuid, timestamptz, timestamptz, integer, integer, integer, integer, jsonb, jsonb, bytea, timestamptz) IS
  'Records a Health Auto Export body as a delivery (origin hae, one final batch of an exportId of the body) with its totals and quarantine, and keeps its other arrays'' items (one row per item); returns the delivery''s id.';

REVOKE EXECUTE ON FUNCTION
  health_store.store_hae_samples(text, boolean, jsonb, uuid, timestamptz, boolean),
  health_store.fill_workout(text, uuid, text, double precision, double precision, boolean),
  health_store.store_hae_workout(text, boolean, jsonb, health_store.workout_stream[], health_store.workout_route, uuid, timestamptz, boolean),
  health_store.store_hae_delivery(text, boolean, health_store.delivery_origin, text, uuid, timestamptz, timestamptz, integer, integer, integer, integer, jsonb, jsonb, bytea, timestamptz)
FROM PUBLIC;
