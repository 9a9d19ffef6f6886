-- People (docs/people.md): who is held, a person's rows deleted whole, settings read out and
-- restored for `person export` / `person import`, and the receiver's credential re-checked
-- under the person lock so a delete racing a batch is never half done.
--
-- Repeatable file (docs/architecture.md, "Schema layout").

-- The one list of the tables holding a person's rows, in the order a delete takes them
-- (children before parents). `person delete` and the tests read it; a test compares it with
-- every health_store table that has a person column, so a new table cannot be forgotten.
CREATE OR REPLACE VIEW health_store.person_tables (table_name, delete_order) AS
VALUES
  ('quarantine', 1), ('deliveries', 2), ('sample_rows', 3), ('series', 4), ('export_contexts', 5), ('coverings', 6),
  ('long_spans', 7), ('key_frontiers', 8), ('rollup_source', 9), ('rollup_day_type', 10), ('rollup_day', 11),
  ('migration_tasks', 12), ('ingested_files', 13),
  ('workout_streams', 14), ('workout_routes', 15), ('workout_fills', 16), ('stridee_workouts', 17), ('wellness_items', 18),
  ('activity_summaries', 19), ('reconciliations', 20), ('export_records', 21), ('connections', 22),
  ('source_priorities', 23), ('source_names', 24), ('settings', 25), ('tokens', 26), ('hae_records', 27), ('persons', 28);

COMMENT ON VIEW health_store.person_tables IS
  'Every health_store table with a person column, in delete order (children first): the one list person delete uses.';

-- Whether a token works now: not revoked, not expired. The one rule the receiver's admission
-- (TokenStore), its sessions and the re-check under the lock all use.
CREATE OR REPLACE FUNCTION health_store.token_is_live(revoked_at timestamptz, expires_at timestamptz) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
RETURN revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now());

COMMENT ON FUNCTION health_store.token_is_live(timestamptz, timestamptz) IS
  'True for a token that works now: not revoked and not expired.';

-- True once any token exists or existed (health_store.receiver_flags): every request then
-- needs a live token. The receiver's admission and its re-check under the lock both use it.
CREATE OR REPLACE FUNCTION health_store.tokens_required() RETURNS boolean
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN EXISTS (SELECT 1 FROM health_store.tokens)
      OR EXISTS (SELECT 1 FROM health_store.receiver_flags f WHERE f.flag = 'tokens_minted');
END
$$;

COMMENT ON FUNCTION health_store.tokens_required() IS
  'True once any token was minted (kept after its person was deleted): every request then needs a live token.';

-- Every writer of a person's rows starts here: the person lock, and for what the receiver
-- stores (p_credential) its credential checked again under that lock, inside the storing
-- statement: a person deleted (tokens and all) between the request's head and its store gets
-- SQLSTATE HW401, and the receiver answers 401 with nothing stored. One statement per way in
-- both checks and stores, so on Citus it is one call on the person's worker (docs/scaling.md).
CREATE OR REPLACE FUNCTION health_store.hold_person(p_person text, p_credential boolean) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  PERFORM health_store.lock_person(p_person);
  IF p_credential AND health_store.tokens_required() AND NOT EXISTS (
       SELECT 1 FROM health_store.tokens t
       WHERE t.person = p_person AND health_store.token_is_live(t.revoked_at, t.expires_at)) THEN
    RAISE EXCEPTION 'person % holds no live token', p_person USING ERRCODE = 'HW401';
  END IF;
END
$$;

COMMENT ON FUNCTION health_store.hold_person(text, boolean) IS
  'Takes the person lock and, with p_credential (what the receiver stores), checks the person still holds a live token when tokens are required; SQLSTATE HW401 when not.';

-- Whether anything of the person is held: a row of health_store.persons or a token.
CREATE OR REPLACE FUNCTION health_store.person_exists(p_person text) RETURNS boolean
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN EXISTS (SELECT 1 FROM health_store.persons p WHERE p.person = p_person)
      OR EXISTS (SELECT 1 FROM health_store.tokens t WHERE t.person = p_person);
END
$$;

COMMENT ON FUNCTION health_store.person_exists(text) IS
  'True when the warehouse holds anything of the person (a persons row or a token).';

-- One row per person (`person list`): live tokens, samples held, the first and last day with
-- a sample, when they last sent anything (a batch or a Stridee push: health_store.note_receipt).
CREATE OR REPLACE FUNCTION health_store.people()
RETURNS TABLE (person text, tokens bigint, samples bigint, first_day date, last_day date, last_received_at timestamptz)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
BEGIN
  -- Each table grouped by person and joined, never a subquery per person (on Citus each
  -- grouped read runs on the workers).
  RETURN QUERY
  WITH who AS (
    SELECT p.person FROM health_store.persons p
    UNION SELECT t.person FROM health_store.tokens t
  ),
  live AS (SELECT t.person, count(*) FILTER (WHERE health_store.token_is_live(t.revoked_at, t.expires_at)) AS n
           FROM health_store.tokens t GROUP BY t.person),
  held AS (SELECT s.person, count(*) AS n FROM health_store.live_samples s GROUP BY s.person),
  days AS (SELECT d.person, min(d.day) AS first_day, max(d.day) AS last_day FROM health_store.rollup_day d GROUP BY d.person)
  SELECT w.person, coalesce(l.n, 0), coalesce(h.n, 0), y.first_day, y.last_day, b.last_received_at
  FROM who w
  LEFT JOIN live l ON l.person = w.person
  LEFT JOIN held h ON h.person = w.person
  LEFT JOIN days y ON y.person = w.person
  LEFT JOIN health_store.persons b ON b.person = w.person
  ORDER BY w.person COLLATE "C";
END
$$;

COMMENT ON FUNCTION health_store.people() IS
  'One row per person held: live tokens, samples held, first and last day with a sample, when they last sent anything, a batch or a Stridee push (person list).';

-- Deletes every row of a person from every table of health_store.person_tables, in the
-- caller's transaction, after the person lock (a batch being stored lands before; one
-- arriving later finds no token: health_store.hold_person). Returns the rows removed per
-- table. Deleting the last tokens leaves tokens required (health_store.receiver_flags).
CREATE OR REPLACE FUNCTION health_store.delete_person(p_person text)
RETURNS TABLE (table_name text, deleted bigint)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_table text;
  v_rows  bigint;
BEGIN
  IF NOT health_store.person_exists(p_person) THEN
    RAISE EXCEPTION 'unknown person "%"', p_person USING ERRCODE = 'no_data_found';
  END IF;
  PERFORM health_store.lock_person(p_person);
  IF EXISTS (SELECT 1 FROM health_store.tokens t WHERE t.person = p_person) THEN
    INSERT INTO health_store.receiver_flags (flag) VALUES ('tokens_minted') ON CONFLICT DO NOTHING;
  END IF;
  FOR v_table IN SELECT pt.table_name FROM health_store.person_tables pt ORDER BY pt.delete_order LOOP
    EXECUTE format('DELETE FROM health_store.%I WHERE person = $1', v_table) USING p_person;
    GET DIAGNOSTICS v_rows = ROW_COUNT;
    table_name := v_table;
    deleted := v_rows;
    RETURN NEXT;
  END LOOP;
END
$$;

COMMENT ON FUNCTION health_store.delete_person(text) IS
  'Deletes every row of a person from every table of health_store.person_tables under the person lock; returns the rows removed per table. no_data_found for an unknown person.';

-- Rows of a person per table of health_store.person_tables, without deleting: what `person
-- delete` shows before it asks.
CREATE OR REPLACE FUNCTION health_store.person_rows(p_person text)
RETURNS TABLE (table_name text, held bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_table text;
BEGIN
  FOR v_table IN SELECT pt.table_name FROM health_store.person_tables pt ORDER BY pt.delete_order LOOP
    table_name := v_table;
    EXECUTE format('SELECT count(*) FROM health_store.%I WHERE person = $1', v_table) INTO held USING p_person;
    RETURN NEXT;
  END LOOP;
END
$$;

COMMENT ON FUNCTION health_store.person_rows(text) IS
  'Rows of a person per table of health_store.person_tables, in delete order (what person delete would remove).';

-- A person's settings as one JSON object (`person export`): time zone, stale_after in seconds,
-- source priorities {type: [sources]} and the Stridee connection (null when never made).
CREATE OR REPLACE FUNCTION health_store.person_settings(p_person text) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN jsonb_build_object(
    'time_zone', (SELECT s.time_zone FROM health_store.settings s WHERE s.person = p_person),
    'stale_after_s', (SELECT extract(epoch FROM s.stale_after) FROM health_store.settings s WHERE s.person = p_person),
    'source_priorities', coalesce((SELECT jsonb_object_agg(p.type, to_jsonb(p.sources))
                                   FROM health_store.source_priorities p WHERE p.person = p_person), '{}'::jsonb),
    'source_names', coalesce((SELECT jsonb_agg(jsonb_build_object('source', n.source, 'named_by', n.named_by, 'name', n.name)
                                               ORDER BY n.source COLLATE "C", n.named_by)
                              FROM health_store.source_names n WHERE n.person = p_person), '[]'::jsonb),
    'connection', (SELECT jsonb_build_object('status', c.status, 'connected_at', c.connected_at,
                                             'disconnected_at', c.disconnected_at, 'updated_at', c.updated_at)
                   FROM health_store.connections c WHERE c.person = p_person),
    'sent_offset', (SELECT p.sent_offset FROM health_store.persons p WHERE p.person = p_person));
END
$$;

COMMENT ON FUNCTION health_store.person_settings(text) IS
  'A person''s settings as JSON: time_zone, stale_after_s, source_priorities {type: [sources]}, source_names [{source, named_by, name}], connection (null when never made), sent_offset (the frame of their days with no time zone: health_store.today_in; null before any healthd batch).';

-- Writes back what health_store.person_settings gave, under the person lock: settings and
-- source priorities before the samples (days are then right as they are stored), and the
-- connection as it was and the phone's offset (after the bodies: the workout bodies connect the
-- person, and the healthd bodies, written in UTC, would leave the offset 0). A folder written
-- before sent_offset was exported leaves it as the bodies left it.
CREATE OR REPLACE FUNCTION health_store.restore_settings(p_person text, p_settings jsonb) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  PERFORM health_store.lock_person(p_person);
  IF p_settings->>'time_zone' IS NOT NULL OR p_settings->>'stale_after_s' IS NOT NULL THEN
    INSERT INTO health_store.settings AS s (person, time_zone, stale_after)
    VALUES (p_person, p_settings->>'time_zone',
            coalesce(make_interval(secs => (p_settings->>'stale_after_s')::double precision), interval '6 hours'))
    ON CONFLICT ON CONSTRAINT settings_pkey DO UPDATE SET time_zone = excluded.time_zone, stale_after = excluded.stale_after;
  END IF;
  INSERT INTO health_store.source_priorities AS p (person, type, sources)
  SELECT p_person, e.key, ARRAY(SELECT jsonb_array_elements_text(e.value))
  FROM jsonb_each(coalesce(p_settings->'source_priorities', '{}'::jsonb)) AS e
  ON CONFLICT ON CONSTRAINT source_priorities_pkey DO UPDATE SET sources = excluded.sources;
  INSERT INTO health_store.source_names AS n (person, source, named_by, name)
  SELECT p_person, x.source, x.named_by, x.name
  FROM jsonb_to_recordset(coalesce(p_settings->'source_names', '[]'::jsonb)) AS x(source text, named_by text, name text)
  ON CONFLICT ON CONSTRAINT source_names_pkey DO UPDATE SET name = excluded.name;
  IF jsonb_typeof(p_settings->'connection') = 'object' THEN
    INSERT INTO health_store.connections AS c (person, status, connected_at, disconnected_at, updated_at)
    SELECT p_person, x.status, x.connected_at, x.disconnected_at, x.updated_at
    FROM jsonb_to_record(p_settings->'connection')
           AS x(status text, connected_at timestamptz, disconnected_at timestamptz, updated_at timestamptz)
    ON CONFLICT (person) DO UPDATE SET status = excluded.status, connected_at = excluded.connected_at,
      disconnected_at = excluded.disconnected_at, updated_at = excluded.updated_at;
  END IF;
  IF p_settings ? 'sent_offset' THEN
    UPDATE health_store.persons p SET sent_offset = (p_settings->>'sent_offset')::smallint WHERE p.person = p_person;
  END IF;
END
$$;

COMMENT ON FUNCTION health_store.restore_settings(text, jsonb) IS
  'Writes back a person''s settings as health_store.person_settings gives them (time zone, stale_after, source priorities, source names, connection, the phone''s offset), under the person lock.';

-- Writes back a route the Health app's export brought, as `person export` read it (the stored
-- row without its person), under the person lock; a route already held for the workout stays.
CREATE OR REPLACE FUNCTION health_store.restore_route(p_person text, p_row jsonb) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  PERFORM health_store.lock_person(p_person);
  INSERT INTO health_store.workout_routes
  SELECT (jsonb_populate_record(NULL::health_store.workout_routes, p_row || jsonb_build_object('person', p_person))).*
  ON CONFLICT (person, uuid) DO NOTHING;
END
$$;

COMMENT ON FUNCTION health_store.restore_route(text, jsonb) IS
  'Writes back an exported route row (without its person) for a person, under the person lock; a route held for that workout stays.';

-- Writes back a workout's stream Health Auto Export brought, as `person export` read it (the
-- stored row without its person), under the person lock; a stream already held stays.
CREATE OR REPLACE FUNCTION health_store.restore_stream(p_person text, p_row jsonb) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  PERFORM health_store.lock_person(p_person);
  INSERT INTO health_store.workout_streams
  SELECT (jsonb_populate_record(NULL::health_store.workout_streams, p_row || jsonb_build_object('person', p_person))).*
  ON CONFLICT (person, uuid, stream) DO NOTHING;
END
$$;

COMMENT ON FUNCTION health_store.restore_stream(text, jsonb) IS
  'Writes back an exported workout stream row (without its person) for a person, under the person lock; a stream held for that workout stays.';

-- Writes back what Health Auto Export's workouts filled in workouts of other ways in, as
-- `person export` read them (a JSON array of the stored rows without their person), under the
-- person lock: a fill held for that workout stays; the rollup keys of the held workouts filled
-- are recomputed.
CREATE OR REPLACE FUNCTION health_store.restore_workout_fills(p_person text, p_rows jsonb) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_uuids uuid[];
BEGIN
  PERFORM health_store.lock_person(p_person);
  WITH added AS (
    INSERT INTO health_store.workout_fills
    SELECT (jsonb_populate_record(NULL::health_store.workout_fills, e || jsonb_build_object('person', p_person))).*
    FROM jsonb_array_elements(p_rows) e
    ON CONFLICT (person, uuid) DO NOTHING
    RETURNING uuid
  )
  SELECT array_agg(a.uuid) INTO v_uuids FROM added a;
  PERFORM health_store.apply_sample_changes(
    p_person,
    (SELECT health_store.changes_of_rows(p_person, array_agg(s.day), array_agg(s.series), array_agg(s.start_at),
                                         array_agg(s.end_at))
     FROM health_store.sample_rows s WHERE s.person = p_person AND s.uuid = ANY (v_uuids)),
    false);
END
$$;

COMMENT ON FUNCTION health_store.restore_workout_fills(text, jsonb) IS
  'Writes back exported workout fills (rows without their person) for a person, under the person lock, and recomputes the rollups of the workouts they fill; a fill held for that workout stays.';

-- A person's deletion marks and reconciliations as one JSON object (`person export`):
-- {"marks": [{uuid, deleted_at, deleted_by_export}], "reconciliations": [rows without the person]}.
CREATE OR REPLACE FUNCTION health_store.person_deletions(p_person text) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN jsonb_build_object(
    'marks', coalesce((SELECT jsonb_agg(jsonb_build_object('uuid', s.uuid, 'deleted_at', s.deleted_at,
                                                           'deleted_by_export', s.deleted_by_export) ORDER BY s.uuid)
                       FROM health_store.sample_rows s WHERE s.person = p_person AND s.deleted_at IS NOT NULL), '[]'::jsonb),
    'reconciliations', coalesce((SELECT jsonb_agg(to_jsonb(r) - 'person' ORDER BY r.reconciled_at)
                                 FROM health_store.reconciliations r WHERE r.person = p_person), '[]'::jsonb));
END
$$;

COMMENT ON FUNCTION health_store.person_deletions(text) IS
  'A person''s deletion marks (uuid, deleted_at, deleted_by_export) and reconciliations as JSON, for person export.';

-- Writes back what health_store.person_deletions gave, after the samples are stored: each
-- group of marks through health_store.mark_deleted (the rule's one writer: coverings and
-- rollups follow), the reconciliations as they were.
CREATE OR REPLACE FUNCTION health_store.restore_deletions(p_person text, p_deletions jsonb) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_group record;
BEGIN
  PERFORM health_store.lock_person(p_person);
  FOR v_group IN
    SELECT m.deleted_at, m.deleted_by_export, array_agg(m.uuid) AS uuids
    FROM jsonb_to_recordset(coalesce(p_deletions->'marks', '[]'::jsonb))
           AS m(uuid uuid, deleted_at timestamptz, deleted_by_export timestamptz)
    GROUP BY m.deleted_at, m.deleted_by_export
  LOOP
    PERFORM health_store.mark_deleted(p_person, v_group.uuids, v_group.deleted_by_export, v_group.deleted_at);
  END LOOP;
  INSERT INTO health_store.reconciliations
  -- An export written before reconciliations were marked forced has no such key: not forced.
  SELECT (jsonb_populate_record(NULL::health_store.reconciliations,
                                jsonb_build_object('forced', false) || r.value || jsonb_build_object('person', p_person))).*
  FROM jsonb_array_elements(coalesce(p_deletions->'reconciliations', '[]'::jsonb)) AS r
  ON CONFLICT DO NOTHING;
END
$$;

COMMENT ON FUNCTION health_store.restore_deletions(text, jsonb) IS
  'Writes back a person''s deletion marks (through mark_deleted) and reconciliations as person_deletions gave them, under the person lock.';

REVOKE EXECUTE ON FUNCTION
  health_store.person_rows(text),
  health_store.restore_stream(text, jsonb),
  health_store.restore_workout_fills(text, jsonb),
  health_store.person_deletions(text),
  health_store.restore_deletions(text, jsonb),
  health_store.restore_route(text, jsonb),
  health_store.tokens_required(),
  health_store.hold_person(text, boolean),
  health_store.person_exists(text),
  health_store.people(),
  health_store.delete_person(text),
  health_store.person_settings(text),
  health_store.restore_settings(text, jsonb)
FROM PUBLIC;

-- Instants as `person export` writes them: the healthd reference's shape in UTC with
-- milliseconds (envelope stamps), and ISO 8601 UTC with microseconds (stream and route times,
-- exact to what is stored).
CREATE OR REPLACE FUNCTION health_store.reference_stamp(t timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');

COMMENT ON FUNCTION health_store.reference_stamp(timestamptz) IS
  'An instant in the healthd reference''s timestamp shape, UTC with milliseconds (2026-08-21T08:25:30.000Z).';

CREATE OR REPLACE FUNCTION health_store.micro_stamp(t timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');

COMMENT ON FUNCTION health_store.micro_stamp(timestamptz) IS
  'An instant as ISO 8601 UTC with microseconds (2026-08-21T08:25:30.250000Z): exact to a stored timestamptz.';

-- A stream kind's name in a healthkit.v1 body: heart_rate → heartRate. The letter after each
-- underscore is raised by translate over ASCII alone, never by upper() or initcap(), whose idea
-- of a letter and of a word follows the database's collation (under an ICU one initcap reads
-- heart_rate as one word).
CREATE OR REPLACE FUNCTION health_store.body_name(stream text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
  SELECT string_agg(CASE WHEN w.n = 1 THEN w.part
                         ELSE translate(left(w.part, 1), 'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ')
                              || substr(w.part, 2) END, '' ORDER BY w.n)
  FROM unnest(string_to_array(stream, '_')) WITH ORDINALITY AS w(part, n);
END;

COMMENT ON FUNCTION health_store.body_name(text) IS
  'A stream kind''s member name in a healthkit.v1 body (heart_rate → heartRate).';
