-- Settings functions of schema health. Each takes the person lock, so a setting never
-- changes in the middle of a batch of the same person, and the rollups it touches are
-- refreshed in the same transaction.
--
-- Repeatable file (docs/architecture.md, "Schema layout").

-- The person's time zone; NULL clears it (days from each sample's written offset again).
-- Re-days the person's samples from the text of their payload and refreshes the rollups of
-- every key a moved sample left or joined.
CREATE OR REPLACE FUNCTION health.set_time_zone(person text, tz text)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_person  text := set_time_zone.person;
  v_tz      text := set_time_zone.tz;
  v_near    text;
  v_keys    health_store.rollup_key[];
BEGIN
  IF v_person IS NULL THEN
    RAISE EXCEPTION 'set_time_zone: person must not be NULL' USING ERRCODE = 'null_value_not_allowed';
  END IF;
  IF v_tz IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_timezone_names z WHERE z.name = v_tz) THEN
    SELECT z.name INTO v_near FROM pg_timezone_names z
    WHERE lower(z.name COLLATE "C") = lower(v_tz COLLATE "C") ORDER BY z.name COLLATE "C" LIMIT 1;
    RAISE EXCEPTION 'unknown time zone "%"', v_tz
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'A time zone must be an IANA name listed in pg_timezone_names, such as Europe/Berlin.',
            HINT = CASE WHEN v_near IS NOT NULL THEN format('Did you mean %s?', v_near)
                        ELSE 'Pass NULL to go back to each sample''s written UTC offset.' END;
  END IF;

  PERFORM health_store.lock_person(v_person);

  INSERT INTO health_store.settings AS s (person, time_zone) VALUES (v_person, v_tz)
  ON CONFLICT ON CONSTRAINT settings_pkey DO UPDATE SET time_zone = excluded.time_zone;

  -- Each sample's day again, from its timestamps as written (health_store.samples gives them).
  WITH target AS (
    SELECT s.uuid, s.day AS old_day, s.type, s.source,
           health_store.sample_day(s.payload->>'start', s.payload->>'end', c.rule, health_store.day_zone(s.origin, s.kept, v_tz)) AS new_day
    FROM health_store.samples s
    LEFT JOIN health_store.catalog c ON c.type = s.type
    WHERE s.person = v_person
  ),
  moved AS (
    UPDATE health_store.sample_rows s SET day = t.new_day
    FROM target t
    WHERE s.person = v_person AND s.uuid = t.uuid AND t.new_day <> t.old_day
    RETURNING t.old_day, t.new_day, t.type, t.source
  ),
  keys AS (
    SELECT m.old_day AS day, m.type, m.source FROM moved m
    UNION
    SELECT m.new_day, m.type, m.source FROM moved m
  )
  SELECT array_agg(ROW(k.day, k.type, k.source)::health_store.rollup_key) INTO v_keys FROM keys k;

  IF cardinality(v_keys) > 2000 THEN
    -- Most days moved: one set-based rebuild beats refreshing key by key.
    PERFORM health_store.rebuild_rollups(v_person);
  ELSIF v_keys IS NOT NULL THEN
    -- Only days changed: the keys left and joined are recomputed (no span moved).
    PERFORM health_store.apply_sample_changes(v_person, ROW(v_keys, NULL, NULL, NULL, false)::health_store.sample_changes, false);
  END IF;
END
$$;

COMMENT ON FUNCTION health.set_time_zone(text, text) IS
  'Sets a person''s IANA time zone (checked against pg_timezone_names; NULL clears it, so each sample''s written UTC offset decides its day again), re-days that person''s samples and refreshes their rollups, under the person lock.';

-- A fixed source order for one per-source type of one person; an empty array (or NULL)
-- clears it, back to the largest total.
CREATE OR REPLACE FUNCTION health.set_source_priority(person text, type text, sources text[])
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_person  text := set_source_priority.person;
  v_type    text := set_source_priority.type;
  v_sources text[] := set_source_priority.sources;
  v_rule    text;
BEGIN
  IF v_person IS NULL THEN
    RAISE EXCEPTION 'set_source_priority: person must not be NULL' USING ERRCODE = 'null_value_not_allowed';
  END IF;
  SELECT c.rule INTO v_rule FROM health_store.catalog c WHERE c.type = v_type;
  IF v_rule IS NULL THEN
    RAISE EXCEPTION 'unknown type "%": a source priority needs a health.catalog type of rule total or sleep', v_type
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM health_store.rules r WHERE r.rule = v_rule AND r.per_source_winner) THEN
    RAISE EXCEPTION 'type "%" has rule %: a source priority applies only to types of rule total or sleep', v_type, v_rule
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Readings are averaged across sources, body values take the latest sample, workouts are listed each.';
  END IF;
  IF array_position(v_sources, NULL) IS NOT NULL THEN
    RAISE EXCEPTION 'set_source_priority: sources must not contain NULL' USING ERRCODE = 'null_value_not_allowed';
  END IF;
  IF (SELECT count(DISTINCT x) FROM unnest(v_sources) AS x) <> coalesce(cardinality(v_sources), 0) THEN
    RAISE EXCEPTION 'set_source_priority: a source is listed twice in %', v_sources USING ERRCODE = 'invalid_parameter_value';
  END IF;

  PERFORM health_store.lock_person(v_person);

  IF coalesce(cardinality(v_sources), 0) = 0 THEN
    DELETE FROM health_store.source_priorities p WHERE p.person = v_person AND p.type = v_type;
  ELSE
    INSERT INTO health_store.source_priorities AS p (person, type, sources) VALUES (v_person, v_type, v_sources)
    ON CONFLICT ON CONSTRAINT source_priorities_pkey DO UPDATE SET sources = excluded.sources;
  END IF;

  PERFORM health_store.refresh_person_derived(v_person, v_type);
END
$$;

COMMENT ON FUNCTION health.set_source_priority(text, text, text[]) IS
  'Sets a fixed source order for one type of rule total or sleep of a person: the highest-priority source with data that day wins (listed before unlisted). An empty array clears it. Refreshes that type''s winners, under the person lock.';

-- How long without a batch makes health.freshness report the person stale.
CREATE OR REPLACE FUNCTION health.set_stale_after(person text, stale_after interval)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_person text := set_stale_after.person;
  v_after  interval := set_stale_after.stale_after;
BEGIN
  IF v_person IS NULL THEN
    RAISE EXCEPTION 'set_stale_after: person must not be NULL' USING ERRCODE = 'null_value_not_allowed';
  END IF;
  IF v_after IS NULL OR v_after <= interval '0' THEN
    RAISE EXCEPTION 'stale_after must be a positive interval, got %', coalesce(v_after::text, 'NULL')
      USING ERRCODE = 'invalid_parameter_value';
  END IF;

  PERFORM health_store.lock_person(v_person);

  INSERT INTO health_store.settings AS s (person, stale_after) VALUES (v_person, v_after)
  ON CONFLICT ON CONSTRAINT settings_pkey DO UPDATE SET stale_after = excluded.stale_after;
END
$$;

COMMENT ON FUNCTION health.set_stale_after(text, interval) IS
  'Sets how long without a batch makes health.freshness report a person stale (a positive interval; 6 hours unless set), under the person lock.';

REVOKE EXECUTE ON FUNCTION
  health.set_time_zone(text, text),
  health.set_source_priority(text, text, text[]),
  health.set_stale_after(text, interval)
FROM PUBLIC;
