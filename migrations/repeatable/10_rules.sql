-- The rules every other definition uses, each written once here:
--
--   which day a sample belongs to          health_store.local_day, health_store.sample_day
--   what "today" is, which days are partial health_store.today_in, health_store.is_partial_in
--                                           (and, for users, health.today and health.is_partial)
--   what a workout is                       health_store.is_workout
--   a sample's typed value                  health_store.typed_value
--   which types are totals                  health_store.total_types
--   which sleep stage a value is            health_store.sleep_stage, health_store.is_asleep
--   when two samples are twins              health_store.is_twin
--   which copy of a uuid wins               health_store.origin_rank
--   the per-person write lock               health_store.lock_person
--
-- Repeatable file: it holds the current definitions and is re-applied whenever it changes
-- (docs/architecture.md, "Schema layout"). SQL functions here have SQL-standard bodies
-- (RETURN / BEGIN ATOMIC): parsed when created, so no search_path at call time can change
-- what they mean, and the planner inlines them. Each is a pure expression of its arguments —
-- no table read, no table row type — so it runs the same wherever a statement runs, on one
-- PostgreSQL or on any node of a cluster sharded by person (docs/scaling.md). The data a rule
-- needs (a person's time zone, a type's rule) is joined by the statement that calls it.
-- PL/pgSQL functions pin their search_path instead.

-- The local date of a timestamp written in the reference's shape
-- (2026-08-21T10:25:30.000+02:00): in time zone tz, or, with no zone, in the offset written
-- in the text itself, which is simply its first ten characters (`Z` is UTC).
CREATE OR REPLACE FUNCTION health_store.local_day(stamp text, tz text) RETURNS date
LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE WHEN tz IS NULL THEN left(stamp, 10)::date
            ELSE (stamp::timestamptz AT TIME ZONE tz)::date END;

COMMENT ON FUNCTION health_store.local_day(text, text) IS
  'Local date of a written timestamp: in time zone tz, or in the UTC offset written in the text when tz is NULL.';

-- The day a sample belongs to, from its start and end as written: its start's, except sleep,
-- which belongs to the morning of waking (the reference, "Aggregate per day"). store_samples
-- and set_time_zone both call this.
CREATE OR REPLACE FUNCTION health_store.sample_day(start text, "end" text, rule text, tz text) RETURNS date
LANGUAGE sql STABLE PARALLEL SAFE
RETURN health_store.local_day(CASE WHEN rule = 'sleep' THEN "end" ELSE start END, tz);

COMMENT ON FUNCTION health_store.sample_day(text, text, text, text) IS
  'The local day a sample belongs to: of its start, or of its end for sleep (rule sleep), in time zone tz or in the offset written.';

-- Today's date in a time zone, or, with none (NULL), the date in UTC−12 — the last place on
-- Earth where a day ends, so a day counts as partial until it is over everywhere.
CREATE OR REPLACE FUNCTION health_store.today_in(tz text) RETURNS date
LANGUAGE sql STABLE PARALLEL SAFE
RETURN coalesce((now() AT TIME ZONE tz)::date, ((now() AT TIME ZONE 'UTC') - interval '12 hours')::date);

COMMENT ON FUNCTION health_store.today_in(text) IS
  'Today''s date in time zone tz, or with none (NULL) the date in UTC−12, so a day stays partial until it is over everywhere.';

-- Whether a day is not over yet in a time zone (NULL: anywhere): the is_partial of every
-- daily view, each joining the person's health_store.settings for tz.
CREATE OR REPLACE FUNCTION health_store.is_partial_in(day date, tz text) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
RETURN day >= health_store.today_in(tz);

COMMENT ON FUNCTION health_store.is_partial_in(date, text) IS
  'True while the day is not over in time zone tz (NULL: not over everywhere): day >= health_store.today_in(tz). The is_partial of every daily view.';

-- Today for a person, for users (psql, the sql/ queries): health_store.today_in of their time
-- zone. Security definer: a reader login may ask without reading health_store.settings itself.
CREATE OR REPLACE FUNCTION health.today(person text) RETURNS date
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN health_store.today_in((SELECT s.time_zone FROM health_store.settings s WHERE s.person = today.person));
END
$$;

COMMENT ON FUNCTION health.today(text) IS
  'Today''s date for a person: in their time zone (health.settings), or with none set the date in UTC−12, so a day stays partial until it is over everywhere. Days on or after it are partial.';

-- Whether a person's day is not over yet, for users: the rule the daily views' is_partial uses.
CREATE OR REPLACE FUNCTION health.is_partial(person text, day date) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN health_store.is_partial_in(is_partial.day,
                                    (SELECT s.time_zone FROM health_store.settings s WHERE s.person = is_partial.person));
END
$$;

COMMENT ON FUNCTION health.is_partial(text, date) IS
  'True while the day is not over in the person''s time zone (day >= health.today(person)), as every daily view''s is_partial: leave such days out of averages.';

-- A workout: a sample of the catalog's workout rule sent as kind workout. Typed workout
-- columns, the workout rollups and health.workouts all ask this.
CREATE OR REPLACE FUNCTION health_store.is_workout(rule text, kind text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN rule = 'workout' AND kind = 'workout';

COMMENT ON FUNCTION health_store.is_workout(text, text) IS
  'True for a sample of a catalog type of rule workout sent as kind workout.';

-- A sample's typed value: only a quantity or category of a catalog type sent with the
-- catalog's kind has one (types outside the catalog and workouts keep theirs in the payload).
CREATE OR REPLACE FUNCTION health_store.typed_value(catalog_kind text, kind text, value text) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN catalog_kind = kind AND kind IN ('quantity', 'category') THEN value::double precision END;

COMMENT ON FUNCTION health_store.typed_value(text, text, text) IS
  'The value column of a sample: its value for a quantity or category of a catalog type sent as the catalog''s kind; NULL otherwise.';

-- The types of rule total: what the coalescing rule applies to.
CREATE OR REPLACE VIEW health_store.total_types AS
SELECT c.type FROM health_store.catalog c WHERE c.rule = 'total';

COMMENT ON VIEW health_store.total_types IS
  'The catalog types of rule total (per-source sums): the only ones a coalescing can be of.';

-- A type's rule and what its rollup rows carry: catalog types only (a type outside the
-- catalog has none of these).
CREATE OR REPLACE VIEW health_store.type_rules AS
SELECT c.type, c.rule, ru.per_source_winner, c.metric, coalesce(ru.day_unit, c.unit) AS unit
FROM health_store.catalog c
JOIN health_store.rules ru ON ru.rule = c.rule;

COMMENT ON VIEW health_store.type_rules IS
  'Per catalog type: its rule, whether one source wins its day, its metric and the unit of its day value (sleep: min).';

-- The sleep stage of a category value (the reference's sleep analysis values); NULL for a
-- value with no known stage.
CREATE OR REPLACE FUNCTION health_store.sleep_stage(value double precision) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE value WHEN 0 THEN 'inBed' WHEN 1 THEN 'asleepUnspecified' WHEN 2 THEN 'awake'
                  WHEN 3 THEN 'asleepCore' WHEN 4 THEN 'asleepDeep' WHEN 5 THEN 'asleepREM' END;

COMMENT ON FUNCTION health_store.sleep_stage(double precision) IS
  'Name of a sleep analysis value: 0 inBed, 1 asleepUnspecified, 2 awake, 3 asleepCore, 4 asleepDeep, 5 asleepREM; NULL for any other.';

-- Asleep: values 1, 3, 4 and 5 (in bed and awake are not sleep).
CREATE OR REPLACE FUNCTION health_store.is_asleep(value double precision) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN health_store.sleep_stage(value) IN ('asleepUnspecified', 'asleepCore', 'asleepDeep', 'asleepREM');

COMMENT ON FUNCTION health_store.is_asleep(double precision) IS
  'True for the sleep analysis values that are sleep: 1, 3, 4 and 5.';

-- Twins: a sample held (h) and another (x) are the same reading when their type agrees (the
-- caller's join), their starts and ends are each less than a second apart (the export writes
-- whole seconds, healthd milliseconds) and their typed values are equal to 1e-9 of the larger
-- (an export converts km and mi to m, lb to kg) — or, with no typed value on either side
-- (types outside the catalog, workouts), their payload values are equal (or both absent).
-- Written with the start range first, so an index on start_at finds the candidates.
CREATE OR REPLACE FUNCTION health_store.is_twin(h_start timestamptz, h_end timestamptz, h_value double precision, h_payload_value jsonb,
                                                x_start timestamptz, x_end timestamptz, x_value double precision, x_payload_value jsonb)
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
RETURN h_start > x_start - interval '1 second' AND h_start < x_start + interval '1 second'
   AND h_end > x_end - interval '1 second' AND h_end < x_end + interval '1 second'
   AND CASE WHEN h_value IS NULL AND x_value IS NULL THEN h_payload_value IS NOT DISTINCT FROM x_payload_value
            ELSE coalesce(abs(h_value - x_value) <= 1e-9 * greatest(abs(h_value), abs(x_value)), false) END;

COMMENT ON FUNCTION health_store.is_twin(timestamptz, timestamptz, double precision, jsonb, timestamptz, timestamptz, double precision, jsonb) IS
  'Twins (an imported record and a pushed sample of one reading): starts and ends each less than a second apart and the same reading (typed values equal to 1e-9 of the larger, or with no typed value on either side the payload values equal). The type is the caller''s join.';

-- Which copy of a sample wins when two origins hold the same uuid: a healthd copy replaces
-- any other, a Stridee body replaces its own earlier copy or an export's, an export only its own.
CREATE OR REPLACE FUNCTION health_store.origin_rank(origin text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE origin WHEN 'healthd' THEN 3 WHEN 'stridee' THEN 2 WHEN 'export' THEN 1 END;

COMMENT ON FUNCTION health_store.origin_rank(text) IS
  'Precedence of a sample''s origin when two copies share a uuid: healthd over stridee over export.';

-- Serializes every write of one person's samples, rollups or settings until the end of the
-- caller's transaction: a row lock on the person's row (made on first use). A reader login
-- has no right to lock it.
CREATE OR REPLACE FUNCTION health_store.lock_person(p_person text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  INSERT INTO health_store.persons (person) VALUES (p_person) ON CONFLICT DO NOTHING;
  PERFORM 1 FROM health_store.persons p WHERE p.person = p_person FOR UPDATE;
END
$$;

COMMENT ON FUNCTION health_store.lock_person(text) IS
  'Locks a person''s row in health_store.persons (creating it on first use) until the caller''s transaction ends: every writer of that person''s data takes it first.';

-- The pure rules keep PostgreSQL's default EXECUTE for everyone: a view a reader reads calls
-- them with the reader's rights (nothing else in health_store is reachable without USAGE on
-- the schema, which readers lack).
REVOKE EXECUTE ON FUNCTION health_store.lock_person(text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION health.today(text), health.is_partial(text, date) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION health.today(text), health.is_partial(text, date) TO health_reader;
