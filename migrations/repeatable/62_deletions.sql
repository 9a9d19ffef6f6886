-- Deletions (docs/apple-export.md, "Deletions"): your copy follows Health. The Health app's export is the whole of
-- Health at the moment it was made (its ExportDate). `import-apple-health PATH --reconcile`
-- stages the export's records (stage_export_records, while the file is read), imports it, and
-- then marks as deleted every sample of the person — whatever way it came in — that starts
-- before the ExportDate, is of a type the export carries, and that no record of the export
-- matches by the twin rule (health_store.is_twin: type, start and end within a second, the same
-- reading, whatever the source is called; a workout by its span). Nothing is erased: a marked
-- sample keeps its row with when and by which export it was marked, and counts nowhere — the
-- rollups, the coalescing rule and every view but health.samples and health.deleted_samples
-- leave it out. Receiving the same uuid again (store_samples), or a later export holding its
-- twin (drop_pushed_twins), is proof it exists again: the mark goes.
--
-- Safety: a reconciliation is refused, nothing marked, when a type would have lost more than
-- 20 % of the samples the person held before the ExportDate when the command started — counting
-- what the reconciliations since the last one that marked nothing (or was forced) marked, so
-- exports each missing a little more are refused once together they miss a fifth — unless
-- forced; and when the export is older than the last one reconciled for the person, unless
-- forced (so a wrong ExportDate can be undone).
--
-- Repeatable file (docs/architecture.md, "Schema layout").

-- Stages the records of one batch of the export being reconciled (healthd-shaped samples, as
-- store_batch takes them): their type, span and reading. Returns how many.
CREATE OR REPLACE FUNCTION health_store.stage_export_records(p_person text, p_run uuid, p_samples jsonb)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_staged integer;
  v_types  text[];
  v_kinds  text[];
  v_rules  text[];
  v_units  text[];
BEGIN
  SELECT array_agg(c.type), array_agg(c.kind), array_agg(c.rule), array_agg(c.unit) INTO v_types, v_kinds, v_rules, v_units
  FROM health_store.catalog c;
  INSERT INTO health_store.export_records (person, run, type, start_at, end_at, value, payload_value)
  SELECT p_person, p_run, t.type, t.start_at, t.end_at, t.value, t.sent->'value'
  FROM health_store.typed_samples(p_samples, NULL, 'export', v_types, v_kinds, v_rules, v_units) t;
  GET DIAGNOSTICS v_staged = ROW_COUNT;
  RETURN v_staged;
END
$$;

COMMENT ON FUNCTION health_store.stage_export_records(text, uuid, jsonb) IS
  'Stages the records of one batch of an export being reconciled (type, span, reading) under the run; returns how many.';

-- Removes what a reconciliation of the person staged: the run given, or every run (NULL; what a
-- crashed command left).
CREATE OR REPLACE FUNCTION health_store.discard_export_records(p_person text, p_run uuid)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  DELETE FROM health_store.export_records r WHERE r.person = p_person AND (p_run IS NULL OR r.run = p_run);
END
$$;

COMMENT ON FUNCTION health_store.discard_export_records(text, uuid) IS
  'Removes the records a reconciliation of a person staged: of one run, or of every run (NULL).';

-- The samples a reconciliation would mark: the person's samples held when the command started
-- (first received before p_started_at, not marked), starting before the ExportDate, of a type
-- the staged export carries, that no staged record is a twin of (Health Auto Export's
-- summarized buckets are never marked: no record is one). The staged records are probed
-- by their index on (type, start): a twin starts within a second.
CREATE OR REPLACE FUNCTION health_store.reconcile_candidates(p_person text, p_run uuid, p_export_date timestamptz,
                                                             p_started_at timestamptz)
RETURNS TABLE (uuid uuid, type text, day date)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_types text[];
BEGIN
  -- Aggregated, not ARRAY(subquery): Citus pushes down no subquery in a target list.
  SELECT array_agg(DISTINCT r.type) INTO v_types FROM health_store.export_records r WHERE r.person = p_person AND r.run = p_run;
  RETURN QUERY
  SELECT s.uuid, s.type, s.day
  FROM health_store.live_samples s
  WHERE s.person = p_person AND s.type = ANY (v_types) AND s.start_at < p_export_date
    AND s.first_received_at < p_started_at
    -- A summarized Health Auto Export bucket is no record of Health's: no export holds it.
    AND NOT health_store.is_bucket(s.origin, s.kept)
    -- The payload's value only counts where no column holds one: what the payload kept.
    AND NOT EXISTS (
      SELECT 1 FROM health_store.export_records r
      WHERE r.person = p_person AND r.run = p_run AND r.type = s.type
        AND health_store.is_twin(r.start_at, r.end_at, r.value, r.payload_value,
                                 s.start_at, health_store.twin_end(s.origin, s.kind, s.end_at), s.value, s.kept->'value')
      -- A probe of the records' (type, start) index per sample, whatever the statistics say: as
      -- an anti-join the planner could hash the records by type and compare each sample with
      -- every record of its type (a year's export ran past the statement timeout).
      OFFSET 0);
END
$$;

COMMENT ON FUNCTION health_store.reconcile_candidates(text, uuid, timestamptz, timestamptz) IS
  'The samples of a person a reconciliation would mark deleted: held when the command started, starting before the ExportDate, of a type the staged export carries, with no twin among its records.';

-- The 20 % rule: refuses (HWR01) when a type this reconciliation marks (p_marked) would have
-- lost more than 20 % of what the person held before the ExportDate, counting with its marks
-- those the person's reconciliations made since the last one that marked nothing or was forced.
-- Held: samples first received before the command started, starting before the ExportDate, not
-- marked or marked since then.
CREATE OR REPLACE FUNCTION health_store.refuse_large_losses(p_person text, p_marked health_store.marked_sample[],
                                                            p_export_date timestamptz, p_started_at timestamptz)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_since   timestamptz;
  v_types   text[];
  v_held    bigint[];
  v_earlier bigint[];
  v_over    text[];
  v_n       bigint[];
  v_before  bigint[];
  v_of      bigint[];
BEGIN
  SELECT max(r.reconciled_at) INTO v_since
  FROM health_store.reconciliations r WHERE r.person = p_person AND (r.deleted = 0 OR r.forced);
  -- What each type held, and how much of it was marked since then, by one grouped statement on
  -- the person's samples (Citus: no lateral join over a distributed table); compared with this
  -- reconciliation's marks in memory. A mark's deleted_at is its reconciliation's reconciled_at.
  SELECT array_agg(h.type), array_agg(h.held), array_agg(h.earlier) INTO v_types, v_held, v_earlier
  FROM (SELECT s.type, count(*) AS held, count(s.deleted_at) AS earlier
        FROM health_store.samples s
        WHERE s.person = p_person AND s.start_at < p_export_date AND s.first_received_at < p_started_at
          AND (s.deleted_at IS NULL OR s.deleted_at > coalesce(v_since, '-infinity'))
        GROUP BY s.type) h;
  -- Every type over the bound, the worst first: the message names each (the first in full).
  SELECT array_agg(o.type ORDER BY o.share DESC, o.type COLLATE "C"), array_agg(o.n ORDER BY o.share DESC, o.type COLLATE "C"),
         array_agg(o.earlier ORDER BY o.share DESC, o.type COLLATE "C"), array_agg(o.held ORDER BY o.share DESC, o.type COLLATE "C")
  INTO v_over, v_n, v_before, v_of
  FROM (SELECT m.type, m.n, h.earlier, h.held, (m.n + h.earlier)::numeric / h.held AS share
        FROM (SELECT k.type, count(*) AS n FROM unnest(p_marked) k GROUP BY k.type) m
        JOIN unnest(v_types, v_held, v_earlier) AS h(type, held, earlier) ON h.type = m.type
        WHERE m.n + h.earlier > 0.2 * h.held) o;
  IF v_over IS NOT NULL THEN
    RAISE EXCEPTION 'reconciling would mark % samples of % deleted: with the % marked since the last reconciliation that marked nothing, % of the % held before the export''s date (more than 20 %%)%: refused, nothing marked',
                    v_n[1], v_over[1], v_before[1], v_n[1] + v_before[1], v_of[1],
                    CASE WHEN cardinality(v_over) > 1
                         THEN '; over the bound too: ' || (SELECT string_agg(format('%s (%s of %s held)', t, n + e, h), ', ' ORDER BY i)
                                                            FROM unnest(v_over, v_n, v_before, v_of) WITH ORDINALITY
                                                                 AS x (t, n, e, h, i)
                                                            WHERE i > 1)
                         ELSE '' END
      USING ERRCODE = 'HWR01',
            HINT = 'Is this the export of the same person''s phone? Run with --dry-run to see what would be marked, and --force to mark it anyway.';
  END IF;
END
$$;

COMMENT ON FUNCTION health_store.refuse_large_losses(text, health_store.marked_sample[], timestamptz, timestamptz) IS
  'The 20 % rule of reconciling: refuses (HWR01) marks after which a type would have lost over a fifth of what was held before the ExportDate, counting the marks since the last reconciliation that marked nothing or was forced; the message names every such type, the worst first.';

-- Reconciles a person with the export staged under p_run: refuses (nothing marked) an export
-- older than the last one reconciled, and one that breaks the 20 % rule (refuse_large_losses),
-- unless p_force; with p_apply marks the candidates (keeping the coalescing rule and the rollups
-- right), records the reconciliation and discards the staged records. Answers what is (or would
-- be) marked, per type and month of its day.
CREATE OR REPLACE FUNCTION health_store.reconcile_export(p_person text, p_run uuid, p_export_date timestamptz, p_path text,
                                                         p_started_at timestamptz, p_force boolean, p_apply boolean,
                                                         p_at timestamptz)
RETURNS TABLE (type text, month date, deleted bigint)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_last    timestamptz;
  v_marked  health_store.marked_sample[];
BEGIN
  PERFORM health_store.lock_person(p_person);
  -- The last one reconciled, by when it was: after a forced one, a wrong date before it is gone.
  SELECT r.export_date INTO v_last
  FROM health_store.reconciliations r WHERE r.person = p_person ORDER BY r.reconciled_at DESC LIMIT 1;
  IF v_last > p_export_date AND NOT p_force THEN
    RAISE EXCEPTION 'this export (ExportDate %) is older than the last one reconciled for % (ExportDate %)',
                    p_export_date, p_person, v_last
      USING ERRCODE = 'HWR02',
            HINT = 'Export again from the Health app and reconcile with the newer export; if the last one''s date was wrong, pass --force to reconcile with this one.';
  END IF;

  -- The staged records arrived in this command: without statistics the planner takes the
  -- table for empty and probes it by a scan per held sample (a 538k-record export: over the
  -- statement timeout). Measured: docs/benchmarks.md, "Apple Health export".
  ANALYZE health_store.export_records;
  v_marked := ARRAY(SELECT ROW(c.uuid, c.type, c.day)::health_store.marked_sample
                    FROM health_store.reconcile_candidates(p_person, p_run, p_export_date, p_started_at) c);
  IF NOT p_force THEN
    PERFORM health_store.refuse_large_losses(p_person, v_marked, p_export_date, p_started_at);
  END IF;

  IF p_apply THEN
    PERFORM health_store.mark_deleted(p_person, ARRAY(SELECT k.uuid FROM unnest(v_marked) k), p_export_date, p_at);
    INSERT INTO health_store.reconciliations (person, export_date, reconciled_at, path, deleted, forced)
    VALUES (p_person, p_export_date, p_at, p_path, coalesce(cardinality(v_marked), 0), p_force);
    PERFORM health_store.discard_export_records(p_person, p_run);
  END IF;

  RETURN QUERY
  SELECT k.type, date_trunc('month', k.day)::date, count(*)
  FROM unnest(v_marked) k
  GROUP BY 1, 2
  ORDER BY k.type COLLATE "C", 2;
END
$$;

COMMENT ON FUNCTION health_store.reconcile_export(text, uuid, timestamptz, text, timestamptz, boolean, boolean, timestamptz) IS
  'Reconciles a person with a staged export: refuses an export older than the last one reconciled or a loss of over 20 % of a type (unless forced); with p_apply marks what no record matches deleted and records it. Answers the marks per type and month.';

-- Marks the given samples of a person deleted by the export of p_export_date — or, with
-- p_export_date NULL, clears their marks (an imported record proved them, revive_pushed_twins)
-- — and returns what that changed for apply_sample_changes. The one writer of the mark but
-- write_samples' own (a sample received again). Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.set_deleted(p_person text, p_uuids uuid[], p_export_date timestamptz,
                                                    p_at timestamptz)
RETURNS health_store.sample_changes
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_days   date[];
  v_series integer[];
  v_starts timestamptz[];
  v_ends   timestamptz[];
BEGIN
  IF coalesce(cardinality(p_uuids), 0) = 0 THEN
    RETURN NULL;
  END IF;
  -- Aggregates in the FROM's select, never subqueries in a target list (Citus pushes none down).
  WITH marked AS (
    UPDATE health_store.sample_rows s
    SET deleted_at = CASE WHEN p_export_date IS NOT NULL THEN p_at END, deleted_by_export = p_export_date
    WHERE s.person = p_person AND s.uuid = ANY (p_uuids) AND (s.deleted_at IS NULL) = (p_export_date IS NOT NULL)
    RETURNING s.day, s.series, s.start_at, s.end_at
  )
  SELECT array_agg(m.day), array_agg(m.series), array_agg(m.start_at), array_agg(m.end_at)
  INTO v_days, v_series, v_starts, v_ends
  FROM marked m;
  RETURN health_store.changes_of_rows(p_person, v_days, v_series, v_starts, v_ends);
END
$$;

COMMENT ON FUNCTION health_store.set_deleted(text, uuid[], timestamptz, timestamptz) IS
  'Marks samples of a person deleted by an export (or, with a NULL export date, clears their marks); returns what that changed. Caller holds the person lock.';

-- Marks samples deleted (or clears their marks) and keeps everything that counts samples right.
-- Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.mark_deleted(p_person text, p_uuids uuid[], p_export_date timestamptz,
                                                     p_at timestamptz)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  PERFORM health_store.apply_sample_changes(p_person, health_store.set_deleted(p_person, p_uuids, p_export_date, p_at), false);
END
$$;

COMMENT ON FUNCTION health_store.mark_deleted(text, uuid[], timestamptz, timestamptz) IS
  'Marks samples of a person deleted by an export (or, with a NULL export date, clears their marks) and redoes the coalescing rule around them, their rollups and the newest end. Caller holds the person lock.';

REVOKE EXECUTE ON FUNCTION
  health_store.stage_export_records(text, uuid, jsonb),
  health_store.discard_export_records(text, uuid),
  health_store.reconcile_candidates(text, uuid, timestamptz, timestamptz),
  health_store.refuse_large_losses(text, health_store.marked_sample[], timestamptz, timestamptz),
  health_store.reconcile_export(text, uuid, timestamptz, text, timestamptz, boolean, boolean, timestamptz),
  health_store.set_deleted(text, uuid[], timestamptz, timestamptz),
  health_store.mark_deleted(text, uuid[], timestamptz, timestamptz)
FROM PUBLIC;

---------------------------------------------------------------------------------------------
-- health.deleted_samples
CREATE OR REPLACE VIEW health.deleted_samples AS
SELECT s.person, s.day, s.type, s.source, s.uuid, s.start_at, s.end_at, s.value, s.deleted_at,
       s.deleted_by_export AS export_date
FROM health_store.samples s
WHERE s.deleted_at IS NOT NULL;

COMMENT ON VIEW health.deleted_samples IS
  'Samples Health no longer holds: reconciling with the Health app''s export (import-apple-health --reconcile) found no record matching them. They keep their row and count in no other view; receiving one again brings it back.';
COMMENT ON COLUMN health.deleted_samples.person IS 'Whose sample.';
COMMENT ON COLUMN health.deleted_samples.day IS 'The sample''s local day (of its start; sleep: of its end), as in health.samples.';
COMMENT ON COLUMN health.deleted_samples.type IS 'Apple type identifier.';
COMMENT ON COLUMN health.deleted_samples.source IS 'Bundle identifier of the app or device that recorded it.';
COMMENT ON COLUMN health.deleted_samples.uuid IS 'The sample''s uuid (health.samples.uuid).';
COMMENT ON COLUMN health.deleted_samples.start_at IS 'When the reading began (timestamptz).';
COMMENT ON COLUMN health.deleted_samples.end_at IS 'When it ended (timestamptz).';
COMMENT ON COLUMN health.deleted_samples.value IS 'Its value in its type''s unit; NULL for workouts and unknown types.';
COMMENT ON COLUMN health.deleted_samples.deleted_at IS 'When the reconciliation marked it (timestamptz).';
COMMENT ON COLUMN health.deleted_samples.export_date IS 'ExportDate of the export that no longer held it (timestamptz).';

GRANT SELECT ON health.deleted_samples TO health_reader;
