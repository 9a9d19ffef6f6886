-- Coalesced samples counted once (docs/views.md, "Coalescing").
--
-- Apple Health may replace fine samples of one source with one combined sample over their
-- span (a new uuid), and healthd v1 carries no deletions, so a receiver holds both. A sample C
-- of rule total is a *coalescing* when the other samples of the same person, type and source
-- that lie inside its span (start >= C.start, end <= C.end) are two or more and together add
-- up to C's value (to 1e-9 of it). C then counts in no total and no sample count — its parts
-- do — whichever arrived first: samples.coalesced marks it, and rollup level 1 leaves it out
-- (20_rollup_source.sql). health_store.coverings lists every sample covering two or more of
-- its source's samples, whether they add up or not (health.coalesced_samples).
--
-- store_samples keeps both right after every batch (refresh_coverings): only samples near
-- the spans the batch wrote (health_store.span) can change, and they are found by index — the samples starting up to
-- an hour before a written span (samples_person_type_source_start), and the rare longer ones
-- that started earlier (samples_person_long_spans, bounded by long_spans). Whether such a
-- sample covers anything is one window function over them; only the ones that do are summed.
--
-- A sample Health deleted (62_deletions.sql) is not held for this rule: it is neither a part
-- nor a covering sample.
--
-- Repeatable file (docs/architecture.md, "Schema layout").

-- The coalescing rule on numbers: two or more parts whose exact sum is the covering sample's
-- value, to 1e-9 of it.
CREATE OR REPLACE FUNCTION health_store.parts_add_up(value double precision, parts bigint, parts_total numeric)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN parts >= 2 AND value IS NOT NULL AND parts_total IS NOT NULL
       AND abs(parts_total - value::numeric) <= 1e-9 * abs(value::numeric);

COMMENT ON FUNCTION health_store.parts_add_up(double precision, bigint, numeric) IS
  'The coalescing rule: two or more parts whose exact sum equals the covering sample''s value to 1e-9 of it.';

-- The UTC date of an instant. A sample of rule total belongs to the local date of its start,
-- in a zone or offset between UTC−12 and UTC+14, so its day is within one of this: every scan
-- by time below also bounds the day, which makes the (person, type, day, source) index as good
-- a path as the one by start. (Without that bound a planner with no statistics yet — a first
-- import, a fresh database — took the day index for the whole key: 50× slower.)
CREATE OR REPLACE FUNCTION health_store.utc_date(t timestamptz) RETURNS date
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (t AT TIME ZONE 'UTC')::date;

COMMENT ON FUNCTION health_store.utc_date(timestamptz) IS
  'The UTC calendar date of an instant; a sample''s local day is within one day of it.';

-- The covers test. S covers some T of its key when T starts no earlier and ends no later. In
-- the order (start, end descending, uuid) of a key's samples every such T comes after S, except
-- one with S's very span, which is then right before it: so the least end among the samples
-- after S (first_end_after) and the span of the one right before it decide it, in one pass. A
-- sample with no duration combines nothing.
CREATE OR REPLACE FUNCTION health_store.covers_another(start_at timestamptz, end_at timestamptz, first_end_after timestamptz,
                                                       before_start timestamptz, before_end timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN end_at > start_at AND (first_end_after <= end_at OR (before_start = start_at AND before_end = end_at));

COMMENT ON FUNCTION health_store.covers_another(timestamptz, timestamptz, timestamptz, timestamptz, timestamptz) IS
  'The covers test in one pass over a key''s samples in the order (start, end descending, uuid): a sample with a duration covers another when the least end after it is within its end, or the sample right before it has its very span.';

-- Samples of the given keys near the given ranges (spans of a type and source, in any number
-- and overlapping as they like) that cover at least one other sample of their key, or are
-- listed in coverings, with what they cover: the count and exact sum of the samples of their
-- key inside their span. With ranges from -infinity to infinity it is every such sample of the
-- keys. It reads tables, so it is called alone in a statement of its own (docs/scaling.md).
--
-- The ranges of a key are first merged into islands (a range starting over an hour after the
-- previous ones ended starts a new one), so a batch spread over a month reads its own samples,
-- not the month, and no sample is read twice. An island reads what starts in it or in the
-- hour before it, and the rare samples over an hour long (samples_person_long_spans, bounded
-- by long_spans) that started earlier — after the previous island — and reach into it.
--
-- Whether a sample covers another is health_store.covers_another over one window.
CREATE OR REPLACE FUNCTION health_store.coverings_near(p_person text, p_ranges health_store.span[])
RETURNS SETOF health_store.covering
LANGUAGE plpgsql STABLE
SET jit = off
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  WITH spans AS (
    SELECT u.type, u.source, u.start_at AS lo, u.end_at AS hi,
           max(u.end_at) OVER (PARTITION BY u.type COLLATE "C", u.source COLLATE "C" ORDER BY u.start_at, u.end_at
                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
    FROM unnest(p_ranges) AS u
  ),
  marked AS (
    SELECT s.*, count(*) FILTER (WHERE s.reach IS NULL OR s.lo > s.reach + interval '1 hour')
                  OVER (PARTITION BY s.type COLLATE "C", s.source COLLATE "C" ORDER BY s.lo, s.hi) AS island
    FROM spans s
  ),
  islands AS (
    SELECT m.type, m.source, min(m.lo) AS lo, max(m.hi) AS hi FROM marked m GROUP BY m.type, m.source, m.island
  ),
  ranges AS (
    SELECT i.type, i.source, k.series, i.lo, i.hi, coalesce(l.longest, interval '0') AS longest,
           coalesce(lag(i.hi) OVER (PARTITION BY i.type, i.source ORDER BY i.lo), '-infinity') AS previous_hi
    FROM islands i
    JOIN health_store.series k ON k.person = p_person AND k.type = i.type AND k.source = i.source
    LEFT JOIN health_store.long_spans l ON l.person = p_person AND l.type = i.type AND l.source = i.source
  ),
  near AS (
    SELECT r.type, r.source, s.uuid, s.start_at, s.end_at, s.value
    FROM ranges r
    CROSS JOIN LATERAL (
      -- Everything starting in the island or the hour before it…
      SELECT s.uuid, s.start_at, s.end_at, s.value FROM health_store.live_samples s
      WHERE s.person = p_person AND s.series = r.series
        AND s.start_at >= r.lo - interval '1 hour' AND s.start_at <= r.hi
        AND s.day BETWEEN health_store.utc_date(r.lo - interval '1 hour') - 1 AND health_store.utc_date(r.hi) + 1
      UNION ALL
      -- …and the long samples that started earlier (after the previous island) and reach into it.
      SELECT s.uuid, s.start_at, s.end_at, s.value FROM health_store.live_samples s
      WHERE s.person = p_person AND s.series = r.series
        AND s.end_at - s.start_at > interval '1 hour'
        AND s.start_at >= r.lo - r.longest AND s.start_at < r.lo - interval '1 hour' AND s.start_at > r.previous_hi
        AND s.end_at >= r.lo
        AND s.day BETWEEN health_store.utc_date(r.lo - r.longest) - 1 AND health_store.utc_date(r.lo) + 1
    ) s
  ),
  windowed AS (
    SELECT n.*, min(n.end_at) OVER later AS first_end_after,
           lead(n.start_at) OVER later AS before_start, lead(n.end_at) OVER later AS before_end
    FROM near n
    WINDOW later AS (PARTITION BY n.type COLLATE "C", n.source COLLATE "C" ORDER BY n.start_at DESC, n.end_at, n.uuid DESC
                     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
  ),
  candidates AS (
    -- A sample with no duration combines nothing: never a candidate (so a flood of samples
    -- at one instant costs nothing here).
    SELECT w.uuid, w.type, w.source, w.start_at, w.end_at, w.value
    FROM windowed w
    WHERE (w.end_at - w.start_at > interval '1 hour'
           OR health_store.covers_another(w.start_at, w.end_at, w.first_end_after, w.before_start, w.before_end))
    UNION
    -- A sample that covered two or more before this batch may cover none now (its key and
    -- span as they are now: the sample itself may have been replaced).
    SELECT s.uuid, r.type, r.source, s.start_at, s.end_at, s.value
    FROM ranges r
    JOIN health_store.coverings c
      ON c.person = p_person AND c.type = r.type AND c.source = r.source
     AND c.start_at >= r.lo - greatest(r.longest, interval '1 hour') AND c.start_at <= r.hi AND c.end_at >= r.lo
    JOIN health_store.sample_rows s ON s.person = p_person AND s.uuid = c.uuid AND s.series = r.series
  ),
  -- What lies inside each distinct span, read once however many candidates share it
  -- (materialized: inlined, the planner, which expects a candidate or two, read it again for
  -- every candidate sharing the span: n² for n samples of one span, 14 s for 4,000).
  inside AS MATERIALIZED (
    SELECT k.type, k.source, k.start_at, k.end_at, p.samples, p.total
    FROM (SELECT DISTINCT c.type, c.source, r.series, c.start_at, c.end_at
          FROM candidates c JOIN (SELECT DISTINCT r.type, r.source, r.series FROM ranges r) r
            ON r.type = c.type AND r.source = c.source) k
    CROSS JOIN LATERAL (
      SELECT count(*) AS samples, sum(q.value::numeric) AS total
      FROM health_store.live_samples q
      WHERE q.person = p_person AND q.series = k.series
        AND q.start_at >= k.start_at AND q.start_at <= k.end_at AND q.end_at <= k.end_at
        AND q.day BETWEEN health_store.utc_date(k.start_at) - 1 AND health_store.utc_date(k.end_at) + 1
    ) p
  )
  -- The parts of a candidate: what lies inside its span but itself.
  SELECT c.uuid, c.type, c.source, c.start_at, c.end_at, c.value, i.samples - 1,
         i.total - coalesce(c.value::numeric, 0)
  FROM candidates c
  JOIN inside i ON i.type = c.type AND i.source = c.source AND i.start_at = c.start_at AND i.end_at = c.end_at;
END
$$;

COMMENT ON FUNCTION health_store.coverings_near(text, health_store.span[]) IS
  'Samples of the given keys near the given time ranges that cover another sample of their key (or did), with the count and exact sum of the samples inside their span.';

-- The first step of refresh_coverings: of the spans a batch wrote (p_spans), the ones that need
-- a look at the samples held. Moves each written key's latest end (key_frontiers) and longest
-- span (long_spans) on, for this batch and later ones. Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.spans_to_decide(p_person text, p_spans health_store.span[])
RETURNS health_store.span[]
LANGUAGE plpgsql
SET jit = off
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_types   text[];
  v_sources text[];
  v_ends    timestamptz[];
  v_longest interval[];
  v_fresh   boolean[];
  v_looked  health_store.span[];
BEGIN
  -- Which spans need a look at the samples held. A key whose written samples all start at or
  -- after the latest end held (key_frontiers) is *fresh*: nothing held can cover or lie inside
  -- what it wrote, so only its own spans are compared, here, in memory; the rare span that
  -- covers another is looked at below. Every other key's spans are. Read, written and compared
  -- in statements of their own (writable CTEs beside reads ran as subplans on Citus: 85 ms).
  SELECT array_agg(k.type), array_agg(k.source), array_agg(k.last_end), array_agg(k.longest),
         array_agg(k.first_start > coalesce(f.latest_end, '-infinity')
                   -- Samples tile: the first new one often starts where the last held one ended.
                   -- Touching is still apart, unless a sample with no duration sits on that
                   -- instant (it lies inside what ends or starts there); one index probe tells.
                   OR (k.first_start = f.latest_end AND k.first_instant IS DISTINCT FROM f.latest_end
                       AND NOT EXISTS (SELECT 1 FROM health_store.live_samples h
                                       WHERE h.person = p_person AND h.type = k.type AND h.source = k.source
                                         AND h.start_at = f.latest_end AND h.end_at = f.latest_end
                                         AND h.day BETWEEN health_store.utc_date(f.latest_end) - 1
                                                       AND health_store.utc_date(f.latest_end) + 1)))
  INTO v_types, v_sources, v_ends, v_longest, v_fresh
  FROM (SELECT w.type, w.source, min(w.start_at) AS first_start, max(w.end_at) AS last_end,
               max(w.end_at - w.start_at) FILTER (WHERE w.end_at - w.start_at > interval '1 hour') AS longest,
               min(w.start_at) FILTER (WHERE w.end_at = w.start_at) AS first_instant
        FROM unnest(p_spans) w GROUP BY w.type, w.source) k
  LEFT JOIN health_store.key_frontiers f ON f.person = p_person AND f.type = k.type AND f.source = k.source;

  -- Each key's latest end moves on, and samples longer than an hour raise their key's bound,
  -- for this batch and later ones.
  INSERT INTO health_store.key_frontiers AS f (person, type, source, latest_end)
  SELECT p_person, k.type, k.source, k.last_end FROM unnest(v_types, v_sources, v_ends) k (type, source, last_end)
  ON CONFLICT (person, type, source) DO UPDATE SET latest_end = excluded.latest_end
  WHERE f.latest_end < excluded.latest_end;
  IF EXISTS (SELECT 1 FROM unnest(v_longest) l WHERE l IS NOT NULL) THEN
    INSERT INTO health_store.long_spans AS l (person, type, source, longest)
    SELECT p_person, k.type, k.source, k.longest FROM unnest(v_types, v_sources, v_longest) k (type, source, longest)
    WHERE k.longest IS NOT NULL
    ON CONFLICT (person, type, source) DO UPDATE SET longest = excluded.longest
    WHERE l.longest < excluded.longest;
  END IF;

  WITH written AS (
    SELECT w.type, w.source, w.start_at AS s, w.end_at AS e FROM unnest(p_spans) AS w
  ),
  keys AS (SELECT k.* FROM unnest(v_types, v_sources, v_fresh) k (type, source, fresh)),
  -- Within a fresh key, the spans that cover another written span.
  fresh AS (
    SELECT w.*, min(w.e) OVER later AS first_end_after, lead(w.s) OVER later AS before_s,
           lead(w.e) OVER later AS before_e
    FROM written w JOIN keys k ON k.type = w.type AND k.source = w.source AND k.fresh
    WINDOW later AS (PARTITION BY w.type COLLATE "C", w.source COLLATE "C" ORDER BY w.s DESC, w.e
                     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
  ),
  looked_at AS (
    SELECT w.type, w.source, w.s, w.e
    FROM written w WHERE (w.type, w.source) IN (SELECT k.type, k.source FROM keys k WHERE NOT k.fresh)
    UNION ALL
    SELECT f.type, f.source, f.s, f.e FROM fresh f
    WHERE health_store.covers_another(f.s, f.e, f.first_end_after, f.before_s, f.before_e)
  )
  SELECT array_agg(ROW(l.type, l.source, l.s, l.e)::health_store.span) INTO v_looked FROM looked_at l;
  RETURN v_looked;
END
$$;

COMMENT ON FUNCTION health_store.spans_to_decide(text, health_store.span[]) IS
  'Of the spans a batch of one person wrote, the ones whose samples held must be looked at again for the coalescing rule (a key written only after everything it holds needs none but its own spans that cover another); moves key_frontiers and long_spans on. Called by refresh_coverings under the person lock.';

-- After a batch: re-decides every sample that may cover what the batch wrote (p_spans: the
-- span of each sample of rule total written, old spans of replaced ones included), keeps
-- coverings and samples.coalesced right, and returns the rollup keys of the samples whose
-- coalesced flag changed: they must be recomputed. Caller holds the person lock.
CREATE OR REPLACE FUNCTION health_store.refresh_coverings(p_person text, p_spans health_store.span[])
RETURNS health_store.rollup_key[]
LANGUAGE plpgsql
SET jit = off
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_looked  health_store.span[];
  v_decided health_store.covering[];
  v_kept    boolean;
  v_dropped boolean;
  v_uuids   uuid[];
  v_flipped health_store.rollup_key[];
BEGIN
  IF coalesce(cardinality(p_spans), 0) = 0 THEN
    RETURN NULL;
  END IF;

  v_looked := health_store.spans_to_decide(p_person, p_spans);

  IF v_looked IS NULL THEN
    RETURN NULL;
  END IF;

  -- The samples near those spans, decided in a statement of their own (coverings_near reads
  -- the tables), then written, each write a statement of its own and only when it has rows
  -- (writable CTEs beside reads ran as subplans through intermediate results on Citus).
  v_decided := ARRAY(SELECT n FROM health_store.coverings_near(p_person, v_looked) n);
  SELECT bool_or(d.parts >= 2), bool_or(d.parts < 2) INTO v_kept, v_dropped FROM unnest(v_decided) d;
  IF v_kept IS NULL THEN
    RETURN NULL;
  END IF;

  IF v_kept THEN
    INSERT INTO health_store.coverings AS c (person, uuid, type, source, start_at, end_at, parts, parts_total, counted)
    SELECT p_person, d.uuid, d.type, d.source, d.start_at, d.end_at, d.parts, d.parts_total,
           NOT health_store.parts_add_up(d.value, d.parts, d.parts_total)
    FROM unnest(v_decided) d
    WHERE d.parts >= 2
    ON CONFLICT (person, uuid) DO UPDATE SET
      type = excluded.type, source = excluded.source, start_at = excluded.start_at, end_at = excluded.end_at,
      parts = excluded.parts, parts_total = excluded.parts_total, counted = excluded.counted
    WHERE (c.type, c.source, c.start_at, c.end_at, c.parts, c.parts_total, c.counted)
          IS DISTINCT FROM (excluded.type, excluded.source, excluded.start_at, excluded.end_at, excluded.parts,
                            excluded.parts_total, excluded.counted);
  END IF;
  IF v_dropped THEN
    DELETE FROM health_store.coverings c
    WHERE c.person = p_person AND c.uuid = ANY (ARRAY(SELECT d.uuid FROM unnest(v_decided) d WHERE d.parts < 2));
  END IF;

  -- The samples whose flag changes, read and then flipped by the uuids as a list (a list
  -- reaches the primary key whatever the statistics say: joined alone, a planner that thinks
  -- the person has few samples hashes all of them).
  SELECT array_agg(s.uuid), array_agg(ROW(s.day, d.type, d.source)::health_store.rollup_key) INTO v_uuids, v_flipped
  FROM health_store.sample_rows s
  JOIN unnest(v_decided) d ON d.uuid = s.uuid
  WHERE s.person = p_person AND s.uuid = ANY (ARRAY(SELECT x.uuid FROM unnest(v_decided) x))
    AND s.coalesced IS DISTINCT FROM health_store.parts_add_up(d.value, d.parts, d.parts_total);
  IF v_uuids IS NOT NULL THEN
    UPDATE health_store.sample_rows s SET coalesced = NOT s.coalesced
    WHERE s.person = p_person AND s.uuid = ANY (v_uuids);
  END IF;
  RETURN v_flipped;
END
$$;

COMMENT ON FUNCTION health_store.refresh_coverings(text, health_store.span[]) IS
  'Re-decides the coalescing rule for every sample that may cover the given written spans, updates coverings and samples.coalesced, and returns the rollup keys of samples whose flag changed. Called by store_samples under the person lock.';

-- Every sample of rule total of a person that covers two or more samples of its source, from
-- scratch: what coverings must hold, a coalescing where health_store.parts_add_up
-- (verify_rollups, rebuild_coverings).
CREATE OR REPLACE FUNCTION health_store.calc_coverings(p_person text)
RETURNS SETOF health_store.covering
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_keys health_store.span[];
BEGIN
  SELECT array_agg(ROW(k.type, k.source, '-infinity', 'infinity')::health_store.span) INTO v_keys
  FROM health_store.series k
  WHERE k.person = p_person AND k.type IN (SELECT t.type FROM health_store.total_types t);
  IF v_keys IS NULL THEN
    RETURN;
  END IF;
  RETURN QUERY
  SELECT n.* FROM unnest(ARRAY(SELECT n FROM health_store.coverings_near(p_person, v_keys) n)) n
  WHERE n.parts >= 2;
END
$$;

COMMENT ON FUNCTION health_store.calc_coverings(text) IS
  'Every sample of rule total of a person covering two or more samples of its own source, computed from the samples alone: what health_store.coverings must hold.';

-- Makes a person's coverings, coalesced flags and long_spans again from the samples alone.
-- Caller holds the person lock; the rollups must be rebuilt after it.
CREATE OR REPLACE FUNCTION health_store.rebuild_coverings(p_person text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_coverings health_store.covering[];
BEGIN
  DELETE FROM health_store.long_spans WHERE person = p_person;
  INSERT INTO health_store.long_spans (person, type, source, longest)
  SELECT s.person, s.type, s.source, max(s.end_at - s.start_at)
  FROM health_store.live_samples s
  WHERE s.person = p_person AND s.end_at - s.start_at > interval '1 hour'
  GROUP BY s.person, s.type, s.source;

  DELETE FROM health_store.key_frontiers WHERE person = p_person;
  INSERT INTO health_store.key_frontiers (person, type, source, latest_end)
  SELECT s.person, s.type, s.source, max(s.end_at)
  FROM health_store.live_samples s
  WHERE s.person = p_person AND s.type IN (SELECT t.type FROM health_store.total_types t)
  GROUP BY s.person, s.type, s.source;

  DELETE FROM health_store.coverings WHERE person = p_person;
  v_coverings := ARRAY(SELECT c FROM health_store.calc_coverings(p_person) c);
  INSERT INTO health_store.coverings (person, uuid, type, source, start_at, end_at, parts, parts_total, counted)
  SELECT p_person, c.uuid, c.type, c.source, c.start_at, c.end_at, c.parts, c.parts_total,
         NOT health_store.parts_add_up(c.value, c.parts, c.parts_total)
  FROM unnest(v_coverings) c;

  UPDATE health_store.sample_rows s SET coalesced = x.coalesced
  FROM (SELECT s.uuid, coalesce(NOT c.counted, false) AS coalesced
        FROM health_store.sample_rows s
        LEFT JOIN health_store.coverings c ON c.person = s.person AND c.uuid = s.uuid
        WHERE s.person = p_person AND (s.coalesced OR c.uuid IS NOT NULL)) x
  WHERE s.person = p_person AND s.uuid = x.uuid AND s.coalesced IS DISTINCT FROM x.coalesced;
END
$$;

COMMENT ON FUNCTION health_store.rebuild_coverings(text) IS
  'Recomputes a person''s coverings, samples.coalesced flags, long_spans and key_frontiers from the samples alone. Caller holds the person lock and rebuilds the rollups after.';

REVOKE EXECUTE ON FUNCTION
  health_store.utc_date(timestamptz),
  health_store.coverings_near(text, health_store.span[]),
  health_store.spans_to_decide(text, health_store.span[]),
  health_store.refresh_coverings(text, health_store.span[]),
  health_store.calc_coverings(text),
  health_store.rebuild_coverings(text)
FROM PUBLIC;
