-- Storing one batch: the one write path for HTTP and files alike.

-- The local date of a timestamp written in the reference's shape
-- (2026-08-21T10:25:30.000+02:00): in time zone tz, or, with no zone, in the offset written
-- in the text itself, which is simply its first ten characters.
CREATE FUNCTION health_store.local_day(stamp text, tz text) RETURNS date
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN tz IS NULL THEN left(stamp, 10)::date
              ELSE (stamp::timestamptz AT TIME ZONE tz)::date END
$$;

-- The day a sample belongs to: its start's, except sleep, which belongs to the morning of
-- waking (the reference, "Aggregate per day").
CREATE FUNCTION health_store.sample_day(payload jsonb, rule text, tz text) RETURNS date
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT health_store.local_day(
           CASE WHEN rule = 'sleep' THEN payload->>'end' ELSE payload->>'start' END, tz)
$$;

-- The keys of a sample the write path reads, typed; named as in the payload. value and the
-- timestamps stay text: value is cast only for known kinds, and the day is taken from the
-- timestamp's text as written.
CREATE TYPE health_store.sample_fields AS (
  uuid uuid, id text, type text, "group" text, source text, start text, "end" text, kind text,
  value text, unit text, name text, "activityType" integer, "activityName" text,
  "durationSeconds" double precision, "distanceMeters" double precision,
  "activeEnergyKilocalories" double precision
);

-- Per-person serialization of every write that touches a person's samples or rollups.
CREATE FUNCTION health_store.lock_person(p_person text) RETURNS void
LANGUAGE sql
AS $$ SELECT pg_advisory_xact_lock(hashtext('health_warehouse.person'), hashtext(p_person)) $$;

-- Refreshes the per-day rollups of the given (day, type, source) keys from the samples.
-- Replaced by the rollup migration; until then there is nothing to refresh.
CREATE FUNCTION health_store.refresh_rollups(p_person text, p_days date[], p_types text[], p_sources text[])
RETURNS void LANGUAGE plpgsql AS $$ BEGIN END $$;

-- Stores one validated batch in the caller's transaction and returns its counts.
--
-- p_envelope  the batch's envelope keys as sent (exportId, generatedAt, batchSequence,
--             isFinalBatch, basis, windowStart, windowEnd, occasionStart, occasionEnd)
-- p_samples   JSON array of the valid samples, each the exact object sent (or built from a
--             CSV row); validated by the caller, so every cast below succeeds
-- p_quarantine JSON array of {position, reason, raw} for the samples that broke the contract
CREATE FUNCTION health_store.store_batch(
  p_person       text,
  p_origin       text,
  p_format       text,
  p_file         text,
  p_envelope     jsonb,
  p_samples      jsonb,
  p_quarantine   jsonb,
  p_body_sha256  bytea,
  p_received_at  timestamptz DEFAULT clock_timestamp()
) RETURNS TABLE (samples integer, inserted integer, duplicates integer, replaced integer, quarantined integer)
LANGUAGE plpgsql
AS $$
DECLARE
  v_tz          text;
  v_valid       integer := jsonb_array_length(p_samples);
  v_quarantined integer := jsonb_array_length(p_quarantine);
  v_inserted    integer;
  v_replaced    integer;
  v_days        date[];
  v_types       text[];
  v_sources     text[];
  v_delivery    bigint;
  v_export      uuid := (p_envelope->>'exportId')::uuid;
BEGIN
  PERFORM health_store.lock_person(p_person);
  SELECT s.time_zone INTO v_tz FROM health_store.settings s WHERE s.person = p_person;

  WITH input AS (
    -- One pass over each sample's keys (jsonb_populate_record) instead of an operator per
    -- column; the sample object itself is kept whole as the payload.
    SELECT e.value AS s, e.ordinality AS pos, f.*, c.rule,
           -- Typed columns only for a known type of a known kind; the payload keeps all.
           (c.type IS NOT NULL AND c.kind = f.kind) AS known
    FROM jsonb_array_elements(p_samples) WITH ORDINALITY AS e
    CROSS JOIN LATERAL jsonb_populate_record(NULL::health_store.sample_fields, e.value) AS f
    LEFT JOIN health_store.catalog c ON c.type = f.type
  ),
  -- A uuid repeated inside the batch is stored once: the later copy wins. Sorted by uuid,
  -- the one lock order for every writer, so concurrent batches cannot deadlock.
  latest AS (
    SELECT DISTINCT ON (uuid) * FROM input ORDER BY uuid, pos DESC
  ),
  written AS (
    INSERT INTO health_store.samples AS t (
      person, uuid, id, type, grp, kind, source, start_at, end_at, day,
      value, unit, category_name, activity_type, activity_name,
      duration_s, distance_m, energy_kcal, payload, first_received_at, last_received_at, export_id)
    SELECT p_person, x.uuid, x.id, x.type, x."group", x.kind, x.source,
           x.start::timestamptz, x."end"::timestamptz,
           health_store.local_day(CASE WHEN x.rule = 'sleep' THEN x."end" ELSE x.start END, v_tz),
           CASE WHEN x.known AND x.kind IN ('quantity', 'category') THEN x.value::double precision END,
           CASE WHEN x.known AND x.kind = 'quantity' THEN x.unit END,
           CASE WHEN x.known AND x.kind = 'category' THEN x.name END,
           CASE WHEN x.known AND x.kind = 'workout' THEN x."activityType" END,
           CASE WHEN x.known AND x.kind = 'workout' THEN x."activityName" END,
           CASE WHEN x.known AND x.kind = 'workout' THEN x."durationSeconds" END,
           CASE WHEN x.known AND x.kind = 'workout' THEN x."distanceMeters" END,
           CASE WHEN x.known AND x.kind = 'workout' THEN x."activeEnergyKilocalories" END,
           x.s, p_received_at, p_received_at, v_export
    FROM latest x
    ORDER BY x.uuid
    ON CONFLICT (person, uuid) DO UPDATE SET
      id = excluded.id, type = excluded.type, grp = excluded.grp, kind = excluded.kind,
      source = excluded.source, start_at = excluded.start_at, end_at = excluded.end_at,
      day = excluded.day, value = excluded.value, unit = excluded.unit,
      category_name = excluded.category_name, activity_type = excluded.activity_type,
      activity_name = excluded.activity_name, duration_s = excluded.duration_s,
      distance_m = excluded.distance_m, energy_kcal = excluded.energy_kcal,
      payload = excluded.payload, last_received_at = excluded.last_received_at,
      export_id = excluded.export_id
    -- The same content again is a duplicate: the row is not rewritten.
    WHERE t.payload IS DISTINCT FROM excluded.payload
    RETURNING t.uuid, t.day, t.type, t.source, (t.xmax = 0) AS is_new
  ),
  -- The old key of each replaced row. Every part of one statement sees the same snapshot,
  -- so this reads the row as it was before the upsert; one index probe per replaced row.
  previous AS (
    SELECT o.day, o.type, o.source
    FROM written w
    CROSS JOIN LATERAL (
      SELECT s.day, s.type, s.source FROM health_store.samples s WHERE s.person = p_person AND s.uuid = w.uuid
    ) AS o
    WHERE NOT w.is_new
  ),
  -- Rollup keys touched: every written row's, and the old key of every replaced row.
  touched AS (
    SELECT w.day, w.type, w.source FROM written w
    UNION
    SELECT p.day, p.type, p.source FROM previous p
  )
  SELECT (SELECT count(*) FILTER (WHERE is_new) FROM written),
         (SELECT count(*) FILTER (WHERE NOT is_new) FROM written),
         (SELECT array_agg(day ORDER BY day, type, source) FROM touched),
         (SELECT array_agg(type ORDER BY day, type, source) FROM touched),
         (SELECT array_agg(source ORDER BY day, type, source) FROM touched)
  INTO v_inserted, v_replaced, v_days, v_types, v_sources;

  IF v_days IS NOT NULL THEN
    PERFORM health_store.refresh_rollups(p_person, v_days, v_types, v_sources);
  END IF;

  INSERT INTO health_store.deliveries (
    person, received_at, origin, format, export_id, batch_sequence, is_final, basis,
    window_start, window_end, occasion_start, occasion_end, generated_at,
    samples, inserted, duplicates, replaced, quarantined, body_sha256, file)
  VALUES (
    p_person, p_received_at, p_origin, p_format, v_export,
    (p_envelope->>'batchSequence')::integer, (p_envelope->>'isFinalBatch')::boolean,
    p_envelope->>'basis',
    (p_envelope->>'windowStart')::timestamptz, (p_envelope->>'windowEnd')::timestamptz,
    (p_envelope->>'occasionStart')::timestamptz, (p_envelope->>'occasionEnd')::timestamptz,
    (p_envelope->>'generatedAt')::timestamptz,
    v_valid + v_quarantined, v_inserted, v_valid - v_inserted - v_replaced, v_replaced,
    v_quarantined, p_body_sha256, p_file)
  RETURNING delivery_id INTO v_delivery;

  INSERT INTO health_store.quarantine (person, delivery_id, position, reason, raw)
  SELECT p_person, v_delivery, (q->>'position')::integer, q->>'reason', q->>'raw'
  FROM jsonb_array_elements(p_quarantine) AS q;

  RETURN QUERY SELECT v_valid + v_quarantined, v_inserted, v_valid - v_inserted - v_replaced,
                      v_replaced, v_quarantined;
END
$$;

COMMENT ON FUNCTION health_store.store_batch IS
  'Stores one validated healthd batch (samples upserted on person and uuid, a delivery row, quarantined samples, rollups of the touched days) in the caller''s transaction; returns its counts.';
