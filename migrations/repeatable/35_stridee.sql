-- The write path of the Stridee formats (docs/stridee.md): a healthkit.v1 workout body with its
-- streams and route, a healthkit.wellness.v1 batch, and the connection they need. Each runs in
-- the caller's transaction under the person lock; the receiver answers 2xx only after COMMIT.
--
-- A workout is one workout whatever brought it: the body is kept in stridee_workouts (its
-- streams and route beside it), and the workout itself is a sample of health_store.samples
-- (origin stridee) made from the body, unless healthd already sent that uuid — then healthd's
-- sample is the workout and the body only adds what healthd has not (server type, device,
-- heart rate, route). Either way health.workouts shows one row and the rollups count it once.
--
-- Repeatable file (docs/architecture.md, "Schema layout").

-- Distance and elevation gain of a route given as parallel arrays in time order. Distance:
-- haversine on a sphere of radius 6,371,008.8 m (the mean Earth radius) over consecutive
-- points; elevation gain: the sum of rises between consecutive points that have an altitude,
-- in time order (NULL when fewer than two points have one).
--
-- Consecutive pairs are the array and itself shifted by one (a[1:n-1] beside a[2:n]), one
-- unnest each: a six-hour ride's 21,600 points cost one pass, not a window over them
-- (measured: about a third of the time of lag() over unnest WITH ORDINALITY). The climb is
-- taken over the altitudes with the missing ones removed, which is "consecutive points that
-- have an altitude".
CREATE OR REPLACE FUNCTION health_store.route_measures(lat double precision[], lon double precision[],
                                                       altitude double precision[],
                                                       OUT distance_m double precision,
                                                       OUT elevation_gain_m double precision)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
  SELECT (SELECT coalesce(sum(2 * 6371008.8 * asin(least(1, sqrt(h.a))))::double precision, 0)
          FROM unnest(lat[1:cardinality(lat) - 1], lon[1:cardinality(lon) - 1], lat[2:], lon[2:]) AS leg(phi0, lambda0, phi1, lambda1)
          CROSS JOIN LATERAL (SELECT sin(radians(leg.phi1 - leg.phi0) / 2) AS dphi, sin(radians(leg.lambda1 - leg.lambda0) / 2) AS dlambda) d
          CROSS JOIN LATERAL (SELECT d.dphi * d.dphi + cos(radians(leg.phi0)) * cos(radians(leg.phi1)) * d.dlambda * d.dlambda AS a) h),
         (SELECT CASE WHEN count(*) > 0 THEN sum(greatest(step.high - step.low, 0)) END
          FROM (SELECT array_remove(altitude, NULL) AS a) known
          CROSS JOIN LATERAL unnest(known.a[1:cardinality(known.a) - 1], known.a[2:]) AS step(low, high));
END;

COMMENT ON FUNCTION health_store.route_measures(double precision[], double precision[], double precision[]) IS
  'Distance (haversine, radius 6,371,008.8 m, over consecutive points) and elevation gain (sum of rises between consecutive points with an altitude) of a route in time order.';

-- A route of a workout, replaced whole: the arrays as given (parallel, time order; NULL
-- elements for missing optional fields) with their measures. An empty route stores nothing.
CREATE OR REPLACE FUNCTION health_store.store_route(p_person text, p_uuid uuid, p_origin health_store.sample_origin,
                                                    p_route health_store.workout_route)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  DELETE FROM health_store.workout_routes WHERE person = p_person AND uuid = p_uuid;
  IF coalesce(cardinality(p_route.t), 0) = 0 THEN
    RETURN;
  END IF;
  INSERT INTO health_store.workout_routes (person, uuid, origin, t, lat, lon, altitude_m, speed_mps, course_deg,
                                           horizontal_accuracy_m, vertical_accuracy_m, points, distance_m, elevation_gain_m)
  SELECT p_person, p_uuid, p_origin, p_route.t, p_route.lat, p_route.lon, p_route.altitude, p_route.speed, p_route.course,
         p_route.horizontal, p_route.vertical, cardinality(p_route.t), m.distance_m, m.elevation_gain_m
  FROM health_store.route_measures(p_route.lat, p_route.lon, p_route.altitude) m;
END
$$;

COMMENT ON FUNCTION health_store.store_route(text, uuid, health_store.sample_origin, health_store.workout_route) IS
  'Replaces the route of one workout (parallel arrays in time order) and computes its distance and elevation gain; an empty route leaves none.';

-- Connects a person (a PUT of the connection, or any relay push) or disconnects them; returns
-- the connection. Connecting again keeps the first connected_at of an active connection.
-- Disconnecting a person never connected records nothing and returns no row (GET still
-- answers 404 for them: never connected). Takes the person lock, which orders it against the
-- person's pushes (they check the connection under it). With p_credential (the receiver) the
-- person's credential is checked again under the lock (health_store.hold_person).
CREATE OR REPLACE FUNCTION health_store.set_connection(p_person text, p_active boolean, p_credential boolean, p_at timestamptz)
RETURNS SETOF health_store.connections
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  PERFORM health_store.hold_person(p_person, p_credential);
  IF NOT p_active THEN
    RETURN QUERY
    UPDATE health_store.connections AS c SET
      status = 'disconnected',
      disconnected_at = CASE WHEN c.status = 'active' THEN p_at ELSE c.disconnected_at END,
      updated_at = p_at
    WHERE c.person = p_person
    RETURNING c.*;
    RETURN;
  END IF;
  RETURN QUERY
  INSERT INTO health_store.connections AS c (person, status, connected_at, disconnected_at, updated_at)
  VALUES (p_person, 'active', p_at, NULL, p_at)
  ON CONFLICT (person) DO UPDATE SET
    status = 'active',
    connected_at = CASE WHEN c.status <> 'active' THEN p_at ELSE c.connected_at END,
    disconnected_at = NULL,
    updated_at = p_at
  RETURNING c.*;
END
$$;

COMMENT ON FUNCTION health_store.set_connection(text, boolean, boolean, timestamptz) IS
  'Connects (active) or disconnects a person''s Stridee connection and returns it; connecting an active connection again keeps its connected_at; disconnecting one never made records nothing and returns no row.';

-- Whether a push may be stored: a relay push (p_connect) connects the person; a device push
-- needs an active connection. Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.accept_push(p_person text, p_connect boolean, p_at timestamptz)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF p_connect THEN
    PERFORM health_store.set_connection(p_person, true, false, p_at);
    RETURN true;
  END IF;
  RETURN EXISTS (SELECT 1 FROM health_store.connections c WHERE c.person = p_person AND c.status = 'active');
END
$$;

COMMENT ON FUNCTION health_store.accept_push(text, boolean, timestamptz) IS
  'Whether a Stridee push of a person may be stored: a relay push connects them and may; a device push needs an active connection. Caller holds the person lock.';

-- Writes a healthkit.v1 workout body that differs from the one held (or is the first): the body
-- upserted whole with its heart rate's extremes, its streams replacing those held, its route
-- (store_route). Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.write_workout_body(
  p_person        text,
  p_uuid          uuid,
  p_header        jsonb,
  p_body_sha256   bytea,
  p_streams       health_store.workout_stream[],
  p_route         health_store.workout_route,
  p_received_at   timestamptz
) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  INSERT INTO health_store.stridee_workouts AS w (
    person, uuid, activity_type, server_type, source_name, source_bundle_id, device_name, start_at, end_at,
    duration_s, distance_m, energy_kcal, header, heart_rate_min, heart_rate_mean, heart_rate_max,
    body_sha256, first_received_at, last_received_at)
  SELECT p_person, p_uuid, (p_header->>'activityType')::integer, p_header->>'serverType',
         p_header->>'sourceName', p_header->>'sourceBundleId', p_header->>'deviceName',
         (p_header->>'startDate')::timestamptz, (p_header->>'endDate')::timestamptz,
         (p_header->>'duration')::double precision, (p_header->>'totalDistanceMeters')::double precision,
         (p_header->>'totalEnergyKcal')::double precision, p_header, hr.low, hr.mean, hr.high,
         p_body_sha256, p_received_at, p_received_at
  FROM (SELECT min(x.v) AS low, avg(x.v) AS mean, max(x.v) AS high
        FROM unnest(p_streams) s CROSS JOIN LATERAL unnest(s.v) AS x(v) WHERE s.stream = 'heart_rate') hr
  ON CONFLICT (person, uuid) DO UPDATE SET
    activity_type = excluded.activity_type, server_type = excluded.server_type,
    source_name = excluded.source_name, source_bundle_id = excluded.source_bundle_id,
    device_name = excluded.device_name, start_at = excluded.start_at, end_at = excluded.end_at,
    duration_s = excluded.duration_s, distance_m = excluded.distance_m, energy_kcal = excluded.energy_kcal,
    header = excluded.header, heart_rate_min = excluded.heart_rate_min,
    heart_rate_mean = excluded.heart_rate_mean, heart_rate_max = excluded.heart_rate_max,
    body_sha256 = excluded.body_sha256, last_received_at = excluded.last_received_at;

  DELETE FROM health_store.workout_streams WHERE person = p_person AND uuid = p_uuid;
  INSERT INTO health_store.workout_streams (person, uuid, stream, t, v)
  SELECT p_person, p_uuid, s.stream, s.t, s.v
  FROM unnest(p_streams) s
  WHERE coalesce(cardinality(s.t), 0) > 0;

  PERFORM health_store.store_route(p_person, p_uuid, 'stridee', p_route);
END
$$;

COMMENT ON FUNCTION health_store.write_workout_body(text, uuid, jsonb, bytea, health_store.workout_stream[], health_store.workout_route, timestamptz) IS
  'Writes a healthkit.v1 workout body of a person whole: the body (with its heart rate''s extremes), its streams and its route, replacing what an earlier body held.';

-- A healthkit.v1 workout as a sample in healthd's shape: start and end as written (so the day
-- follows the same rule as every sample's), the body's hash as its id, the header kept whole
-- under "stridee", distance and energy only when the body carries them.
CREATE OR REPLACE FUNCTION health_store.stridee_workout_sample(p_header jsonb, p_body_sha256 bytea)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN jsonb_build_object(
    'uuid', p_header->>'uuid',
    'id', encode(p_body_sha256, 'hex'),
    'type', 'HKWorkoutTypeIdentifier',
    'group', 'workouts',
    'kind', 'workout',
    'source', coalesce(p_header->>'sourceBundleId', p_header->>'sourceName', 'unknown'),
    'start', p_header->>'startDate',
    'end', p_header->>'endDate',
    'activityType', (p_header->>'activityType')::integer,
    -- Lower-cased in the C collation: ASCII only, whatever the database's (an ICU tr-TR
    -- lowers I to a dotless ı).
    'activityName', lower(p_header->>'serverType' COLLATE "C"),
    'durationSeconds', (p_header->>'duration')::double precision,
    'stridee', p_header)
  || jsonb_strip_nulls(jsonb_build_object(
       'distanceMeters', (p_header->>'totalDistanceMeters')::double precision,
       'activeEnergyKilocalories', (p_header->>'totalEnergyKcal')::double precision));

COMMENT ON FUNCTION health_store.stridee_workout_sample(jsonb, bytea) IS
  'A healthkit.v1 workout body''s header as its workout sample in healthd''s shape (the body''s hash as id, the header under stridee).';

-- Stores one healthkit.v1 workout body, validated by the caller: the body replaces an earlier
-- copy whole (write_workout_body); the workout sample (stridee_workout_sample) goes through the
-- write path (store_samples), made or updated unless healthd sent the workout, and brought back
-- if a reconciliation marked it deleted, the same body again too. Answers stored (new),
-- replaced (another body held before), unchanged (the same body again) or not_connected (a
-- device push while the person is not connected: nothing stored).
--
-- p_credential true for the receiver: the person's credential checked again under the lock
--            (health_store.hold_person)
-- p_header   the body's top-level members without the streams and route
-- p_streams  its streams (health_store.stream_kinds), each in time order; empty ones are none
-- p_route    its route in time order (empty: none)
CREATE OR REPLACE FUNCTION health_store.store_workout(
  p_person        text,
  p_connect       boolean,
  p_credential    boolean,
  p_header        jsonb,
  p_body_sha256   bytea,
  p_streams       health_store.workout_stream[],
  p_route         health_store.workout_route,
  p_received_at   timestamptz
) RETURNS health_store.push_outcome
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_uuid   uuid := (p_header->>'uuid')::uuid;
  v_held   bytea;
BEGIN
  PERFORM health_store.hold_person(p_person, p_credential);
  IF NOT health_store.accept_push(p_person, p_connect, p_received_at) THEN
    RETURN 'not_connected';
  END IF;
  -- A push received is a receipt, the same body again too (no delivery: health_store.note_receipt).
  PERFORM health_store.note_receipt(p_person, p_received_at, NULL, NULL);

  SELECT w.body_sha256 INTO v_held FROM health_store.stridee_workouts w WHERE w.person = p_person AND w.uuid = v_uuid;
  -- The same body again changes nothing of the body but when it was last received; its sample
  -- still goes through the write path below like any way in's resend, which leaves a sample
  -- held as it is and brings back one a reconciliation marked deleted (sample_action: revive).
  IF v_held = p_body_sha256 THEN
    UPDATE health_store.stridee_workouts SET last_received_at = p_received_at WHERE person = p_person AND uuid = v_uuid;
  ELSE
    PERFORM health_store.write_workout_body(p_person, v_uuid, p_header, p_body_sha256, p_streams, p_route, p_received_at);
  END IF;

  -- Stored unless a winning copy (healthd's) is held.
  PERFORM health_store.store_samples(p_person, jsonb_build_array(health_store.stridee_workout_sample(p_header, p_body_sha256)),
                                     'stridee', p_received_at, NULL, false);
  RETURN CASE WHEN v_held IS NULL THEN 'stored' WHEN v_held = p_body_sha256 THEN 'unchanged' ELSE 'replaced' END;
END
$$;

COMMENT ON FUNCTION health_store.store_workout(text, boolean, boolean, jsonb, bytea, health_store.workout_stream[], health_store.workout_route, timestamptz) IS
  'Stores one healthkit.v1 workout body of a person (replacing an earlier copy whole, streams and route included: write_workout_body) and its workout sample through the write path unless healthd sent it (the same body again brings back a sample marked deleted); answers stored (new), replaced, unchanged or not_connected.';

-- Stores a healthkit.wellness.v1 batch, validated by the caller, given as parallel arrays
-- (one element per item, in body order): each item upserted on (person, kind, startTime), the
-- later of two copies in one batch winning, kept as the exact json text sent. The columns come
-- decoded (a json operator re-reads the item's text on every call: seven columns of 2,000 items
-- measured ~40 ms). Answers the outcome and the number of items stored (two items of one
-- identity are one) and how many of them were new; nothing is stored for a device push while
-- the person is not connected. (An answer's columns cannot change in place: dropped first.)
DROP FUNCTION IF EXISTS health_store.store_wellness(text, boolean, boolean, text[], timestamptz[], text[], timestamptz[], bigint[], boolean[], text[], json[], timestamptz);
CREATE FUNCTION health_store.store_wellness(
  p_person       text,
  p_connect      boolean,
  p_credential   boolean,
  p_kind         text[],
  p_start        timestamptz[],
  p_date         text[],
  p_end          timestamptz[],
  p_tz_offset    bigint[],
  p_final        boolean[],
  p_id           text[],
  p_item         json[],
  p_received_at  timestamptz,
  OUT outcome    health_store.push_outcome,
  OUT items      integer,
  OUT inserted   integer
)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  PERFORM health_store.hold_person(p_person, p_credential);
  IF NOT health_store.accept_push(p_person, p_connect, p_received_at) THEN
    outcome := 'not_connected';
    items := 0;
    inserted := 0;
    RETURN;
  END IF;
  -- A push received is a receipt (no delivery: health_store.note_receipt).
  PERFORM health_store.note_receipt(p_person, p_received_at, NULL, NULL);

  WITH upserted AS (
  INSERT INTO health_store.wellness_items AS w (
    person, kind, start_at, calendar_date, end_at, tz_offset_s, is_final, item_id, item,
    first_received_at, last_received_at)
  SELECT DISTINCT ON (e.kind, e.start_at)
         p_person, e.kind, e.start_at, e.day::date, e.end_at, e.tz_offset::integer, e.is_final, e.id, e.item,
         p_received_at, p_received_at
  FROM unnest(p_kind, p_start, p_date, p_end, p_tz_offset, p_final, p_id, p_item)
         WITH ORDINALITY AS e(kind, start_at, day, end_at, tz_offset, is_final, id, item, position)
  ORDER BY e.kind, e.start_at, e.position DESC
  ON CONFLICT (person, kind, start_at) DO UPDATE SET
    calendar_date = excluded.calendar_date, end_at = excluded.end_at, tz_offset_s = excluded.tz_offset_s,
    is_final = excluded.is_final, item_id = excluded.item_id, item = excluded.item,
    last_received_at = excluded.last_received_at
  -- A row an INSERT made has no xmax; one ON CONFLICT updated has the updater's.
  RETURNING (w.xmax = 0) AS is_new)
  SELECT count(*), count(*) FILTER (WHERE is_new) INTO items, inserted FROM upserted;
  outcome := 'stored';
END
$$;

COMMENT ON FUNCTION health_store.store_wellness(text, boolean, boolean, text[], timestamptz[], text[], timestamptz[], bigint[], boolean[], text[], json[], timestamptz) IS
  'Stores a healthkit.wellness.v1 batch of a person (parallel arrays, one element per item), each item upserted on (person, kind, startTime) and kept as sent; answers stored, the items stored (one per identity) and how many were new, or not_connected and 0 when a device push finds the person not connected.';

REVOKE EXECUTE ON FUNCTION
  health_store.store_route(text, uuid, health_store.sample_origin, health_store.workout_route),
  health_store.set_connection(text, boolean, boolean, timestamptz),
  health_store.accept_push(text, boolean, timestamptz),
  health_store.write_workout_body(text, uuid, jsonb, bytea, health_store.workout_stream[], health_store.workout_route, timestamptz),
  health_store.store_workout(text, boolean, boolean, jsonb, bytea, health_store.workout_stream[], health_store.workout_route, timestamptz),
  health_store.store_wellness(text, boolean, boolean, text[], timestamptz[], text[], timestamptz[], bigint[], boolean[], text[], json[], timestamptz)
FROM PUBLIC;
