-- The write path. store_samples inserts and replaces the rows of health_store.samples — every
-- sample comes in through it: healthd batches (HTTP and backlog files) and the Health app's
-- export through store_batch, a Stridee workout's sample through store_workout
-- (35_stridee.sql). It upserts samples on (person, uuid) and keeps the rollups of every key it
-- touched, in the caller's transaction under the person lock: incoming_samples reads what the
-- batch is and what is held of it, write_samples writes it. The other writers of the table
-- only mark or remove what is held; docs/architecture.md ("Who writes health_store.samples")
-- lists them, and SchemaLayoutTests holds that list to the functions' own text. store_batch
-- stores one validated batch with it, plus the batch's delivery row and its quarantined
-- samples.
--
-- Repeatable file (docs/architecture.md, "Schema layout").

-- Each sample of a batch of one person as the write path writes it (a uuid repeated in the batch
-- once, the later copy): its typed columns and what is held under its uuid. It reads the
-- samples, so it is called alone in a statement of its own (docs/scaling.md).
--
-- p_samples  JSON array of sample objects in healthd's shape, validated by the caller, so
--            every cast below succeeds; each object is kept whole as the payload
-- p_tz       the person's time zone (NULL: the offset each sample was written with)
CREATE OR REPLACE FUNCTION health_store.incoming_samples(p_person text, p_samples jsonb, p_tz text)
RETURNS SETOF health_store.incoming_sample
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  WITH input AS (
    -- One pass over each sample's keys (jsonb_populate_record) instead of an operator per
    -- column; the sample object itself is kept whole as the payload.
    SELECT e.value AS s, e.ordinality AS pos, f.*, c.rule, c.kind AS catalog_kind
    FROM jsonb_array_elements(p_samples) WITH ORDINALITY AS e
    CROSS JOIN LATERAL jsonb_populate_record(NULL::health_store.sample_fields, e.value) AS f
    LEFT JOIN health_store.catalog c ON c.type = f.type
  ),
  -- A uuid repeated inside the batch is stored once: the later copy wins.
  latest AS (
    SELECT DISTINCT ON (uuid) * FROM input ORDER BY uuid, pos DESC
  )
  SELECT x.uuid, x.id, x.type, x."group" AS grp, x.kind, x.source,
         x.start::timestamptz AS start_at, x."end"::timestamptz AS end_at,
         health_store.sample_day(x.start, x."end", x.rule, p_tz) AS day,
         -- Typed columns only for a known type of a known kind; the payload keeps all.
         health_store.typed_value(x.catalog_kind, x.kind, x.value) AS value,
         CASE WHEN x.catalog_kind = x.kind AND x.kind = 'quantity' THEN x.unit END AS unit,
         CASE WHEN x.catalog_kind = x.kind AND x.kind = 'category' THEN x.name END AS category_name,
         CASE WHEN health_store.is_workout(x.rule, x.kind) THEN x."activityType" END AS activity_type,
         CASE WHEN health_store.is_workout(x.rule, x.kind) THEN x."activityName" END AS activity_name,
         CASE WHEN health_store.is_workout(x.rule, x.kind) THEN x."durationSeconds" END AS duration_s,
         CASE WHEN health_store.is_workout(x.rule, x.kind) THEN x."distanceMeters" END AS distance_m,
         CASE WHEN health_store.is_workout(x.rule, x.kind) THEN x."activeEnergyKilocalories" END AS energy_kcal,
         x.s AS payload, x.rule = 'total' AS is_total,
         o.uuid IS NOT NULL AS held, o.payload AS old_payload, o.origin AS old_origin,
         o.day AS old_day, o.type AS old_type, o.source AS old_source,
         o.start_at AS old_start_at, o.end_at AS old_end_at, o.is_total AS old_is_total,
         o.deleted_at IS NOT NULL AS old_deleted
  FROM latest x
  -- One primary-key probe per sample (LATERAL keeps the planner from scanning the
  -- person's rows).
  LEFT JOIN LATERAL (
    SELECT h.uuid, h.payload, h.origin, h.day, h.type, h.source, h.start_at, h.end_at, h.deleted_at,
           h.type IN (SELECT t.type FROM health_store.total_types t) AS is_total
    FROM health_store.samples h
    WHERE h.person = p_person AND h.uuid = x.uuid
  ) AS o ON true;
END
$$;

COMMENT ON FUNCTION health_store.incoming_samples(text, jsonb, text) IS
  'The samples of a batch of one person as the write path writes them: typed columns, and the held row of each uuid (payload, origin, key, span, deletion).';

-- Writes the samples of one batch of one person (health_store.incoming_samples' rows): new
-- uuids inserted, held ones with other content replaced unless the held copy came from an
-- origin that wins (origin_rank), held ones marked deleted and received again revived. Returns
-- the counts, the rollup keys to recompute (a replaced row left or joined them, a revived one
-- joined them), per other key the samples it gained, and the spans of rule total written (old
-- spans of replaced rows too). Caller holds the person lock.
--
-- Every writer of a person's samples holds that person's lock, so nobody else inserts this
-- person's uuids meanwhile: new ones are plain inserts and changed ones plain updates, which is
-- much cheaper than an INSERT … ON CONFLICT over the batch.
CREATE OR REPLACE FUNCTION health_store.write_samples(
  p_person       text,
  p_rows         health_store.incoming_sample[],
  p_origin       text,
  p_received_at  timestamptz,
  p_export       uuid,
  OUT n_inserted integer,
  OUT n_replaced integer,
  OUT keys       health_store.rollup_key[],
  OUT added      health_store.added_samples[],
  OUT spans      health_store.span[]
)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_rank integer := health_store.origin_rank(p_origin);
BEGIN
  WITH typed AS (
    SELECT * FROM unnest(p_rows)
  ),
  inserted AS (
    INSERT INTO health_store.samples AS n (
      person, uuid, id, type, grp, kind, source, start_at, end_at, day,
      value, unit, category_name, activity_type, activity_name,
      duration_s, distance_m, energy_kcal, payload, first_received_at, last_received_at, export_id, origin)
    SELECT p_person, uuid, id, type, grp, kind, source, start_at, end_at, day,
           value, unit, category_name, activity_type, activity_name,
           duration_s, distance_m, energy_kcal, payload, p_received_at, p_received_at, p_export, p_origin
    FROM typed WHERE NOT held
    ORDER BY uuid
    RETURNING n.day, n.type, n.source, n.start_at, n.end_at,
              health_store.sample_facts_of(n.kind, n.value, n.start_at, n.end_at, n.uuid, n.activity_type,
                                           n.duration_s, n.distance_m, n.energy_kcal) AS facts
  ),
  -- A held uuid with other content: the newer copy replaces the older, unless the older came
  -- from an origin that wins (origin_rank). The same content again is a duplicate and the row
  -- is not touched — unless it was marked deleted: received again, it exists again
  -- (62_deletions.sql), and counts again.
  replaced AS (
    UPDATE health_store.samples AS t SET
      id = x.id, type = x.type, grp = x.grp, kind = x.kind, source = x.source,
      start_at = x.start_at, end_at = x.end_at, day = x.day, value = x.value, unit = x.unit,
      category_name = x.category_name, activity_type = x.activity_type,
      activity_name = x.activity_name, duration_s = x.duration_s, distance_m = x.distance_m,
      energy_kcal = x.energy_kcal, payload = x.payload, last_received_at = p_received_at,
      export_id = p_export, origin = p_origin, deleted_at = NULL, deleted_by_export = NULL
    FROM typed x
    WHERE x.held AND x.old_payload IS DISTINCT FROM x.payload
      AND v_rank >= health_store.origin_rank(x.old_origin)
      AND t.person = p_person AND t.uuid = x.uuid
    RETURNING t.day, t.type, t.source, t.start_at, t.end_at, x.is_total, x.old_day, x.old_type, x.old_source,
              x.old_start_at, x.old_end_at, x.old_is_total
  ),
  revived AS (
    UPDATE health_store.samples AS t SET deleted_at = NULL, deleted_by_export = NULL
    FROM typed x
    WHERE x.held AND x.old_deleted
      AND NOT (x.old_payload IS DISTINCT FROM x.payload AND v_rank >= health_store.origin_rank(x.old_origin))
      AND t.person = p_person AND t.uuid = x.uuid
    RETURNING t.day, t.type, t.source, t.start_at, t.end_at, x.old_is_total AS is_total
  ),
  written_spans AS (
    SELECT i.type, i.source, i.start_at, i.end_at FROM inserted i
    WHERE i.type IN (SELECT t.type FROM health_store.total_types t)
    UNION ALL SELECT r.type, r.source, r.start_at, r.end_at FROM replaced r WHERE r.is_total
    UNION ALL SELECT r.old_type, r.old_source, r.old_start_at, r.old_end_at FROM replaced r WHERE r.old_is_total
    UNION ALL SELECT v.type, v.source, v.start_at, v.end_at FROM revived v WHERE v.is_total
  ),
  -- Rollup keys a replaced row left or joined, or a revived one joined: recomputed from the samples.
  recompute AS (
    SELECT day, type, source FROM replaced
    UNION
    SELECT old_day, old_type, old_source FROM replaced
    UNION
    SELECT day, type, source FROM revived
  )
  SELECT (SELECT count(*) FROM inserted),
         (SELECT count(*) FROM replaced),
         (SELECT array_agg(ROW(r.day, r.type, r.source)::health_store.rollup_key) FROM recompute r),
         -- Every other key touched only gained samples: the rollups merge these into what
         -- they hold instead of reading the key's samples again.
         (SELECT array_agg(ROW(g.day, g.type, g.source, g.samples)::health_store.added_samples)
          FROM (SELECT i.day, i.type, i.source, array_agg(i.facts) AS samples
                FROM inserted i
                WHERE NOT EXISTS (SELECT 1 FROM recompute r
                                  WHERE r.day = i.day AND r.type = i.type AND r.source = i.source)
                GROUP BY i.day, i.type, i.source) g),
         (SELECT array_agg(ROW(w.type, w.source, w.start_at, w.end_at)::health_store.span) FROM written_spans w)
  INTO n_inserted, n_replaced, keys, added, spans;
END
$$;

COMMENT ON FUNCTION health_store.write_samples(text, health_store.incoming_sample[], text, timestamptz, uuid) IS
  'Inserts, replaces and revives the samples of one batch of one person; returns the counts, the rollup keys to recompute, the samples each other key gained and the spans of rule total written. Caller holds the person lock.';

-- Notes a person's newest sample end on their row (persons.newest_end_at) after their samples
-- changed: one backward probe of samples_person_end. The writers that add, replace, revive or
-- mark samples call it (store_samples, mark_deleted). Caller holds the person lock.
--
-- Planned for each call (a plan cached while the person had few samples scanned them all once
-- they were many: 112 ms a batch at 300k samples).
CREATE OR REPLACE FUNCTION health_store.note_newest_end(p_person text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
  v_newest timestamptz;
BEGIN
  SELECT s.end_at INTO v_newest FROM health_store.samples s
  WHERE s.person = p_person AND s.deleted_at IS NULL
  ORDER BY s.end_at DESC LIMIT 1;
  UPDATE health_store.persons p SET newest_end_at = v_newest
  WHERE p.person = p_person AND p.newest_end_at IS DISTINCT FROM v_newest;
END
$$;

COMMENT ON FUNCTION health_store.note_newest_end(text) IS
  'Sets persons.newest_end_at of a person to the latest end of the samples held (deleted ones left out). Caller holds the person lock.';

-- Upserts samples of one person and refreshes the rollups of every key touched; returns how
-- many were inserted and how many replaced (the rest are duplicates). Caller holds the person
-- lock (health_store.lock_person).
--
-- p_samples  JSON array of sample objects in healthd's shape, validated by the caller, so
--            every cast below succeeds; each object is kept whole as the payload
-- p_origin   healthd, stridee or export (health_store.origin_rank decides between copies)
-- p_export   the exportId the copies came with, if any
CREATE OR REPLACE FUNCTION health_store.store_samples(
  p_person       text,
  p_samples      jsonb,
  p_origin       text,
  p_received_at  timestamptz,
  p_export       uuid,
  OUT n_inserted integer,
  OUT n_replaced integer
)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_tz       text;
  v_rows     health_store.incoming_sample[];
  -- Rollup keys a replaced sample left or joined (recomputed), and per key the samples the
  -- batch inserted into every other key it touched (merged).
  v_keys     health_store.rollup_key[];
  v_added    health_store.added_samples[];
  -- Spans of the samples of rule total written (old spans of replaced ones too): the
  -- coalescing rule is decided again around them.
  v_spans    health_store.span[];
  v_flipped  health_store.rollup_key[];
BEGIN
  SELECT s.time_zone INTO v_tz FROM health_store.settings s WHERE s.person = p_person;

  -- A pushed sample replaces the imported twin of it (33_apple_export.sql): one index probe
  -- for a person who never imported.
  IF p_origin <> 'export' THEN
    PERFORM health_store.drop_export_twins(p_person, p_samples);
  END IF;

  v_rows := ARRAY(SELECT r FROM health_store.incoming_samples(p_person, p_samples, v_tz) r);
  SELECT w.n_inserted, w.n_replaced, w.keys, w.added, w.spans INTO n_inserted, n_replaced, v_keys, v_added, v_spans
  FROM health_store.write_samples(p_person, v_rows, p_origin, p_received_at, p_export) w;

  -- A sample whose coalescing state changed leaves or joins its key's totals: that key is
  -- recomputed rather than merged.
  IF v_spans IS NOT NULL THEN
    v_flipped := health_store.refresh_coverings(p_person, v_spans);
    IF v_flipped IS NOT NULL THEN
      v_keys := v_keys || v_flipped;
      SELECT array_agg(a) INTO v_added
      FROM unnest(v_added) a
      WHERE NOT EXISTS (SELECT 1 FROM unnest(v_flipped) f
                        WHERE f.day = a.day AND f.type = a.type AND f.source = a.source);
    END IF;
  END IF;

  PERFORM health_store.refresh_batch_rollups(p_person, v_keys, v_added);

  -- The person's newest sample end: new samples can only move it on; a held one replaced or
  -- revived, or an imported twin dropped, may move it back, and then it is looked up. A writer
  -- grouping batches (health_warehouse.defer_rollups) has it looked up once, by flush_rollups.
  IF current_setting('health_warehouse.defer_rollups', true) = 'on' THEN
    RETURN;
  ELSIF EXISTS (SELECT 1 FROM unnest(v_rows) r WHERE r.held)
     OR (p_origin <> 'export' AND EXISTS (SELECT 1 FROM health_store.samples s
                                          WHERE s.person = p_person AND s.origin = 'export')) THEN
    PERFORM health_store.note_newest_end(p_person);
  ELSE
    UPDATE health_store.persons p SET newest_end_at = n.newest
    FROM (SELECT max(r.end_at) AS newest FROM unnest(v_rows) r) n
    WHERE p.person = p_person AND n.newest > coalesce(p.newest_end_at, '-infinity');
  END IF;
END
$$;

COMMENT ON FUNCTION health_store.store_samples(text, jsonb, text, timestamptz, uuid) IS
  'Upserts samples of one person on (person, uuid) (a copy of a winning origin is never replaced by another) and refreshes the rollups of every key touched; returns the inserted and replaced counts. Caller holds the person lock.';

-- Stores one validated batch in the caller's transaction and returns its counts.
--
-- p_origin    where the batch came from: http, file (healthd backlog files) or export (the
--             Health app's export); the samples' own origin is healthd, or export
-- p_envelope  the batch's envelope keys as sent (exportId, generatedAt, batchSequence,
--             isFinalBatch, basis, windowStart, windowEnd, occasionStart, occasionEnd)
-- p_samples   JSON array of the valid samples, each the exact object sent (or built from a
--             CSV row); validated by the caller, so every cast below succeeds
-- p_quarantine JSON array of {position, reason, raw} for the samples that broke the contract
-- p_received_at when the batch was received (the caller's clock: every instant is a parameter)
-- p_credential true for the receiver: the person's credential is checked again under the
--             person lock (health_store.hold_person, SQLSTATE HW401 when it is gone), so one
--             statement both checks and stores
--
-- An export's records that a held healthd or Stridee sample already is are not stored and are
-- counted as matched (drop_pushed_twins, 33_apple_export.sql).
CREATE OR REPLACE FUNCTION health_store.store_batch(
  p_person       text,
  p_origin       text,
  p_credential   boolean,
  p_format       text,
  p_file         text,
  p_envelope     jsonb,
  p_samples      jsonb,
  p_quarantine   jsonb,
  p_body_sha256  bytea,
  p_received_at  timestamptz
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
  v_delivery    bigint;
  v_export      uuid := (p_envelope->>'exportId')::uuid;
  v_samples     jsonb := p_samples;
  v_matched     integer := 0;
BEGIN
  PERFORM health_store.hold_person(p_person, p_credential);

  IF p_origin = 'export' THEN
    SELECT t.samples, t.matched INTO v_samples, v_matched FROM health_store.drop_pushed_twins(p_person, p_samples) t;
  END IF;

  SELECT s.n_inserted, s.n_replaced INTO v_inserted, v_replaced
  FROM health_store.store_samples(p_person, v_samples, CASE p_origin WHEN 'export' THEN 'export' ELSE 'healthd' END,
                                  p_received_at, v_export) s;

  INSERT INTO health_store.deliveries (
    person, received_at, origin, format, export_id, batch_sequence, is_final, basis,
    window_start, window_end, occasion_start, occasion_end, generated_at,
    samples, inserted, duplicates, replaced, quarantined, body_sha256, file, matched)
  VALUES (
    p_person, p_received_at, p_origin, p_format, v_export,
    (p_envelope->>'batchSequence')::integer, (p_envelope->>'isFinalBatch')::boolean,
    p_envelope->>'basis',
    (p_envelope->>'windowStart')::timestamptz, (p_envelope->>'windowEnd')::timestamptz,
    (p_envelope->>'occasionStart')::timestamptz, (p_envelope->>'occasionEnd')::timestamptz,
    (p_envelope->>'generatedAt')::timestamptz,
    v_valid + v_quarantined, v_inserted, v_valid - v_inserted - v_replaced - v_matched, v_replaced,
    v_quarantined, p_body_sha256, p_file, v_matched)
  RETURNING delivery_id INTO v_delivery;
  UPDATE health_store.persons SET last_delivery_id = v_delivery WHERE person = p_person;

  -- An export's record is quarantined once per person however often it is read (its
  -- attributes' hash); a pushed sample once per delivery that carried it.
  INSERT INTO health_store.quarantine (person, delivery_id, position, reason, raw, raw_sha256)
  SELECT p_person, v_delivery, (q->>'position')::integer, q->>'reason', q->>'raw',
         CASE WHEN p_origin = 'export' THEN sha256(convert_to(q->>'raw', 'UTF8')) END
  FROM jsonb_array_elements(p_quarantine) AS q
  ON CONFLICT (person, raw_sha256) WHERE raw_sha256 IS NOT NULL DO NOTHING;

  RETURN QUERY SELECT v_valid + v_quarantined, v_inserted, v_valid - v_inserted - v_replaced - v_matched,
                      v_replaced, v_quarantined, v_matched;
END
$$;

COMMENT ON FUNCTION health_store.store_batch IS
  'Stores one validated healthd batch (samples upserted on person and uuid, a delivery row, quarantined samples, rollups of the touched days) in the caller''s transaction; returns its counts. An export''s records equal to a held pushed sample are not stored and are counted as matched.';

REVOKE EXECUTE ON FUNCTION
  health_store.note_newest_end(text),
  health_store.incoming_samples(text, jsonb, text),
  health_store.write_samples(text, health_store.incoming_sample[], text, timestamptz, uuid),
  health_store.store_samples(text, jsonb, text, timestamptz, uuid),
  health_store.store_batch(text, text, boolean, text, text, jsonb, jsonb, jsonb, bytea, timestamptz)
FROM PUBLIC;
