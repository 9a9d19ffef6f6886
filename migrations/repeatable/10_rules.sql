-- The rules every other definition uses, each written once here:
--
--   which day a sample belongs to    health_store.local_day, health_store.sample_day
--   what "today" is for a person     health.today (and so which days are partial)
--   what a workout is                health_store.is_workout
--   the per-person write lock        health_store.lock_person
--
-- Repeatable file: it holds the current definitions and is re-applied whenever it changes
-- (docs/architecture.md, "Schema layout"). SQL functions here have SQL-standard bodies
-- (RETURN / BEGIN ATOMIC): parsed when created, so no search_path at call time can change
-- what they mean, and the planner can still inline them. PL/pgSQL functions pin their
-- search_path instead.

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
-- which belongs to the morning of waking (the reference, "Aggregate per day"). store_batch
-- and set_time_zone both call this.
CREATE OR REPLACE FUNCTION health_store.sample_day(start text, "end" text, rule text, tz text) RETURNS date
LANGUAGE sql STABLE PARALLEL SAFE
RETURN health_store.local_day(CASE WHEN rule = 'sleep' THEN "end" ELSE start END, tz);

COMMENT ON FUNCTION health_store.sample_day(text, text, text, text) IS
  'The local day a sample belongs to: of its start, or of its end for sleep (rule sleep), in time zone tz or in the offset written.';

-- Today's date for a person: in their time zone, or, with none set, the date in UTC−12 —
-- the last place on Earth where a day ends, so a day counts as partial until it is over
-- everywhere. A day is partial when day >= today (health.is_partial). Security definer: a
-- reader login may ask for today without reading health_store.settings itself.
CREATE OR REPLACE FUNCTION health.today(person text) RETURNS date
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
  SELECT coalesce(
    (SELECT (now() AT TIME ZONE s.time_zone)::date
     FROM health_store.settings s
     WHERE s.person = today.person AND s.time_zone IS NOT NULL),
    ((now() AT TIME ZONE 'UTC') - interval '12 hours')::date);
END;

COMMENT ON FUNCTION health.today(text) IS
  'Today''s date for a person: in their time zone (health.settings), or with none set the date in UTC−12, so a day stays partial until it is over everywhere. Days on or after it are partial.';

-- Whether a person's day is not over yet: the is_partial of every daily view.
CREATE OR REPLACE FUNCTION health.is_partial(person text, day date) RETURNS boolean
LANGUAGE sql STABLE
RETURN day >= health.today(person);

COMMENT ON FUNCTION health.is_partial(text, date) IS
  'True while the day is not over in the person''s time zone (day >= health.today(person)): leave such days out of averages.';

-- Today for every person, computed once per person and query: the daily views join it by
-- person. OFFSET 0 keeps the planner from folding the call into the outer query, where it
-- would run on every row.
CREATE OR REPLACE VIEW health_store.zone_today AS
SELECT p.person, health.today(p.person) AS today
FROM health_store.persons p
OFFSET 0;

COMMENT ON VIEW health_store.zone_today IS
  'health.today of every person in health_store.persons; the daily views compare day with it for is_partial.';

-- A workout: a sample of the catalog's workout rule sent as kind workout. Typed workout
-- columns, the workout rollups and health.workouts all ask this.
CREATE OR REPLACE FUNCTION health_store.is_workout(rule text, kind text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN rule = 'workout' AND kind = 'workout';

COMMENT ON FUNCTION health_store.is_workout(text, text) IS
  'True for a sample of a catalog type of rule workout sent as kind workout.';

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

-- local_day, sample_day and is_workout keep PostgreSQL's default EXECUTE for everyone: a view
-- a reader reads calls them with the reader's rights (nothing else in health_store is
-- reachable without USAGE on the schema, which readers lack).
REVOKE EXECUTE ON FUNCTION health_store.lock_person(text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION health.today(text), health.is_partial(text, date) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION health.today(text), health.is_partial(text, date) TO health_reader;
