-- The sources a person's samples came from, and the names shown for them: the one a person set
-- with health.set_source_name, else the one learned from the Health app's export
-- (note_source_names, 33_apple_export.sql), else the identifier itself. Every other view keeps
-- the identifier in its source column.
--
-- Repeatable file (docs/architecture.md, "Schema layout").

CREATE OR REPLACE VIEW health.sources AS
SELECT r.person, r.source, coalesce(mine.name, learned.name, r.source) AS name,
       CASE WHEN mine.name IS NOT NULL THEN 'person' WHEN learned.name IS NOT NULL THEN 'export' END AS named_by,
       sum((r.agg).samples)::bigint AS samples, min(r.day) AS first_day, max(r.day) AS last_day
FROM health_store.rollup_source r
LEFT JOIN health_store.source_names mine ON mine.person = r.person AND mine.source = r.source AND mine.named_by = 'person'
LEFT JOIN health_store.source_names learned ON learned.person = r.person AND learned.source = r.source AND learned.named_by = 'export'
GROUP BY r.person, r.source, mine.name, learned.name;

COMMENT ON VIEW health.sources IS
  'Every source a person''s counted samples came from, with the name shown for it: one row per person and source. Set a name with health-warehouse source rename (health.set_source_name).';
COMMENT ON COLUMN health.sources.person IS 'Whose data.';
COMMENT ON COLUMN health.sources.source IS 'The source as every other view names it: the identifier sent (a bundle identifier from healthd and Stridee, the device''s name from the Health app''s export).';
COMMENT ON COLUMN health.sources.name IS 'The name shown for it: set by the person, else the Health app export''s sourceName of its twins ("Anna''s Apple Watch"), else source itself.';
COMMENT ON COLUMN health.sources.named_by IS 'Where name comes from: person (health-warehouse source rename), export (learned from the Health app''s export), NULL (none: the identifier).';
COMMENT ON COLUMN health.sources.samples IS 'Samples of this source counted in the daily views (coalescings and deleted samples left out).';
COMMENT ON COLUMN health.sources.first_day IS 'The first local day with a sample of it.';
COMMENT ON COLUMN health.sources.last_day IS 'The last local day with a sample of it.';

GRANT SELECT ON health.sources TO health_reader;

-- The name a person wants shown for one of their sources (NULL or '' clears it, back to the
-- learned name or the identifier), under the person lock.
CREATE OR REPLACE FUNCTION health.set_source_name(person text, source text, name text)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_person text := set_source_name.person;
  v_source text := set_source_name.source;
  v_name   text := nullif(set_source_name.name, '');
BEGIN
  IF v_person IS NULL OR v_source IS NULL THEN
    RAISE EXCEPTION 'set_source_name: person and source must not be NULL' USING ERRCODE = 'null_value_not_allowed';
  END IF;
  IF octet_length(v_name) > 1024 THEN
    RAISE EXCEPTION 'a source''s name is % bytes, at most 1024', octet_length(v_name) USING ERRCODE = 'string_data_right_truncation';
  END IF;
  PERFORM health_store.lock_person(v_person);
  IF NOT EXISTS (SELECT 1 FROM health_store.rollup_source r WHERE r.person = v_person AND r.source = v_source) THEN
    RAISE EXCEPTION 'person % has no source %', v_person, v_source
      USING ERRCODE = 'no_data_found', HINT = 'health-warehouse source list shows the sources held.';
  END IF;
  IF v_name IS NULL THEN
    DELETE FROM health_store.source_names n WHERE n.person = v_person AND n.source = v_source AND n.named_by = 'person';
  ELSE
    INSERT INTO health_store.source_names AS n (person, source, named_by, name) VALUES (v_person, v_source, 'person', v_name)
    ON CONFLICT ON CONSTRAINT source_names_pkey DO UPDATE SET name = excluded.name;
  END IF;
END
$$;

COMMENT ON FUNCTION health.set_source_name(text, text, text) IS
  'Sets the name shown for a source of a person (health.sources), which a name learned from an export never overwrites; NULL or '''' clears it. Refused (no_data_found) for a source the person has no sample of.';

REVOKE EXECUTE ON FUNCTION health.set_source_name(text, text, text) FROM PUBLIC;
