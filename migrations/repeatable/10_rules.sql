-- The rules every other definition uses, each written once here:
--
--   which day a sample belongs to          health_store.local_day, health_store.sample_day
--   what "today" is, which days are partial health_store.today_in, health_store.is_partial_in
--                                           (and, for users, health.today and health.is_partial)
--   what a workout is                       health_store.is_workout
--   a sample's typed value                  health_store.typed_value
--   which types are totals                  health_store.total_types
--   which sleep stage a value is            health_store.sleep_stage, health_store.is_asleep
--   when two samples are twins              health_store.is_twin, health_store.twin_end,
--                                           health_store.is_bucket
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

-- The time zone a sample's day is taken in: the person's (tz), but for a night Health Auto
-- Export summarized (haeBucket "night"), which counts on its date as written (CONTRACT.md §9):
-- the offset written, in which its end falls on that date (HAEDecoder.nightEnd). store_samples
-- and set_time_zone both call this.
CREATE OR REPLACE FUNCTION health_store.day_zone(origin health_store.sample_origin, payload jsonb, tz text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN origin = 'hae' AND payload->>'haeBucket' = 'night' THEN NULL ELSE tz END;

COMMENT ON FUNCTION health_store.day_zone(health_store.sample_origin, jsonb, text) IS
  'The time zone a sample''s day is taken in: tz, or for a summarized Health Auto Export night (haeBucket night) none, so that it counts on its date as written.';

-- The offset written in a timestamp of the reference's exact shape
-- (2026-08-21T10:25:30.000+02:00), in minutes east of UTC; NULL for any other text, which a
-- sample then keeps in its payload. Exactly the texts health_store.stamp_text writes back
-- (`-00:00` aside: it reads as UTC but is written back as `+00:00`).
CREATE OR REPLACE FUNCTION health_store.stamp_offset(stamp text) RETURNS smallint
LANGUAGE sql STABLE PARALLEL SAFE
-- The layout by LIKE, which is all that is left to check: every way in has read the text as a
-- timestamp with its ranges checked first (Timestamp, Sources/HealthPayload: hour 00–23,
-- second 00–59, offset minutes 00–59), so with this layout its digit places hold digits in
-- range. A regular expression or translate() cost ten to thirty times as much (measured). The
-- offset's six characters read as an interval, sign included (±hh:mm reads the same in every
-- IntervalStyle and DateStyle): a third cheaper than its digits taken apart with substr() and a
-- test of the sign (0.8 ms of a 1000-sample batch's two stamps each, measured). STABLE, as the
-- text's cast to interval is: an IMMUTABLE function calling it would not be inlined.
RETURN CASE WHEN stamp LIKE '____-__-__T__:__:__.___+__:__'
                 OR (stamp LIKE '____-__-__T__:__:__.___-__:__' AND stamp NOT LIKE '%-00:00')
            THEN (date_part('epoch', right(stamp, 6)::interval)::integer / 60)::smallint END;

COMMENT ON FUNCTION health_store.stamp_offset(text) IS
  'Minutes east of UTC written in a timestamp of the reference''s shape (2026-08-21T10:25:30.000+02:00); NULL for any other text.';

-- A timestamp written back in the reference's shape with the offset it was written in (the
-- inverse of stamp_offset); NULL without an offset.
CREATE OR REPLACE FUNCTION health_store.stamp_text(t timestamptz, offset_min smallint) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN to_char(t AT TIME ZONE make_interval(mins => offset_min), 'YYYY-MM-DD"T"HH24:MI:SS.MS')
       || CASE WHEN offset_min < 0 THEN '-' ELSE '+' END
       || to_char(abs(offset_min) / 60, 'FM00') || ':' || to_char(abs(offset_min) % 60, 'FM00');

COMMENT ON FUNCTION health_store.stamp_text(timestamptz, smallint) IS
  'An instant written as the reference writes it (2026-08-21T10:25:30.000+02:00) in a given offset, in minutes east of UTC.';

-- An instant written as the Health app's export writes its dates (2015-01-17 18:41:28 +0100), in
-- a given offset in minutes east of UTC: how an imported record's creation date is given back
-- (ExportMapper.createdSeconds sends the seconds only when this writes its text back).
CREATE OR REPLACE FUNCTION health_store.export_stamp_text(t timestamptz, offset_min smallint) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN to_char(t AT TIME ZONE make_interval(mins => offset_min), 'YYYY-MM-DD HH24:MI:SS')
       || CASE WHEN offset_min < 0 THEN ' -' ELSE ' +' END
       || to_char(abs(offset_min) / 60, 'FM00') || to_char(abs(offset_min) % 60, 'FM00');

COMMENT ON FUNCTION health_store.export_stamp_text(timestamptz, smallint) IS
  'An instant written as the Health app''s export writes dates (2015-01-17 18:41:28 +0100), in a given offset in minutes east of UTC.';

-- An imported record's object without what its row holds apart (context, created_s:
-- compact_payload): the keys the export's mapping sent them in (exportShared, exportContext,
-- exportCreated), and its healthExport block's value as written when that is a string the
-- sample's value gives back as full_payload writes it (value: its value column's text, or of a
-- type outside the catalog, which has none, its value as sent: a count, a value already in the
-- catalog's unit, an unknown type's number), with the block when nothing else is left in it.
-- Any other sample's object as it is, at the cost of one test.
CREATE OR REPLACE FUNCTION health_store.export_kept(s jsonb, value text, context bigint, created_s integer)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN context IS NULL AND created_s IS NULL THEN s
            WHEN NOT coalesce(s->'healthExport'->>'value' = value AND jsonb_typeof(s->'healthExport'->'value') = 'string', false)
              THEN s - ARRAY['exportShared', 'exportContext', 'exportCreated']
            WHEN (s->'healthExport') - 'value' = '{}'::jsonb
              THEN s - ARRAY['exportShared', 'exportContext', 'exportCreated', 'healthExport']
            ELSE jsonb_set(s - ARRAY['exportShared', 'exportContext', 'exportCreated'], '{healthExport}',
                           (s->'healthExport') - 'value') END;

COMMENT ON FUNCTION health_store.export_kept(jsonb, text, bigint, integer) IS
  'An imported record''s object without the keys its shared members and creation date came in, and without its healthExport value where the sample''s value gives it back (value: its column''s text, or its value as sent); any other sample''s object unchanged.';

-- What of a sample as sent the stored columns do not give back: the sample's object without
-- the keys health_store.full_payload rebuilds to the same JSON; NULL when they rebuild all of it.
-- The write path stores this as the payload, so a sample costs its columns and little else.
-- Each key is decided from its text as sent (sent_…: the sample's health_store.sent_fields) and
-- its column: the uuid when written in upper case; a timestamp written in the reference's shape
-- (its offset known); a number whose text is the one its column gives back through numeric
-- as double precision writes it (42.50 stays; 0.30000000000000004 goes, written back the same:
-- the shortest text that reads back as the same double, which is what extra_float_digits 1, the
-- default, gives; the write path and full_payload pin it); a string its column holds. The identifying
-- strings (id, type, group, source, kind) are always held: every way in sends them as strings
-- (the decoders quarantine any other). No jsonb is read or built but by the one removal (and
-- for an imported record export_kept's): comparing texts the caller already has is what makes
-- this cheap enough per sample (measured).
-- An imported record's shared healthExport members (exportShared, with the number they are held
-- under: context, from exportContext) and its creation date's seconds (created_s: exportCreated)
-- go to their own columns, and with them its value as written when the sample's value gives it
-- back (export_kept).
CREATE OR REPLACE FUNCTION health_store.compact_payload(
  s jsonb, sent_uuid text, uuid uuid, start_offset smallint, end_offset smallint, sent_value text, value double precision,
  unit text, category_name text, sent_activity_type text, activity_type integer, activity_name text,
  sent_duration text, duration_s double precision, sent_distance text, distance_m double precision,
  sent_energy text, energy_kcal double precision, sent_min text, value_min double precision, sent_max text,
  value_max double precision, context bigint, created_s integer)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN nullif(health_store.export_kept(s, coalesce(value::text, sent_value), context, created_s) - ARRAY[
    CASE WHEN sent_uuid LIKE '________-____-____-____-____________' AND sent_uuid = upper(sent_uuid COLLATE "C") THEN 'uuid' END,
    'id', 'type', 'group', 'source', 'kind',
    CASE WHEN start_offset IS NOT NULL THEN 'start' END,
    CASE WHEN end_offset IS NOT NULL THEN 'end' END,
    CASE WHEN sent_value = value::text THEN 'value' END,
    CASE WHEN unit IS NOT NULL THEN 'unit' END,
    CASE WHEN category_name IS NOT NULL THEN 'name' END,
    CASE WHEN sent_activity_type = activity_type::text THEN 'activityType' END,
    CASE WHEN activity_name IS NOT NULL THEN 'activityName' END,
    CASE WHEN sent_duration = duration_s::text THEN 'durationSeconds' END,
    CASE WHEN sent_distance = distance_m::text THEN 'distanceMeters' END,
    CASE WHEN sent_energy = energy_kcal::text THEN 'activeEnergyKilocalories' END,
    CASE WHEN sent_min = value_min::text THEN 'Min' END,
    CASE WHEN sent_max = value_max::text THEN 'Max' END
  ], '{}'::jsonb);

COMMENT ON FUNCTION health_store.compact_payload(jsonb, text, uuid, smallint, smallint, text, double precision, text, text, text, integer, text, text, double precision, text, double precision, text, double precision, text, double precision, text, double precision, bigint, integer) IS
  'A sample''s object as sent without the keys its columns rebuild to the same JSON (health_store.full_payload), an imported record''s shared members and creation date gone to their columns; NULL when nothing is left. sent_…: the keys'' texts as sent.';

-- A sample's object as sent, from its columns and what compact_payload left: the keys the
-- columns rebuild, overridden by the ones kept (a key is kept whenever its rebuild would differ).
-- Min and Max are rebuilt from value_min and value_max, which only Health Auto Export's samples set;
-- an imported record's healthExport block from its shared members (context: their object,
-- health_store.export_contexts.members), its value as written from the sample's value where
-- compact_payload took it out (the column's text, or the value kept as sent), its creation date from created_s (seconds after its end, written
-- in the end's offset) and what the payload kept of it.
CREATE OR REPLACE FUNCTION health_store.full_payload(
  uuid uuid, type text, grp text, source text, kind text, id text, start_at timestamptz, start_offset smallint,
  end_at timestamptz, end_offset smallint, value double precision, unit text, category_name text,
  activity_type integer, activity_name text, duration_s double precision, distance_m double precision,
  energy_kcal double precision, value_min double precision, value_max double precision, kept jsonb, context jsonb,
  created_s integer)
RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
-- Numbers are written as compact_payload compared them, whatever the reader's session says.
SET extra_float_digits = 1
RETURN jsonb_strip_nulls(jsonb_build_object(
         'uuid', upper(uuid::text COLLATE "C"), 'id', id, 'type', type, 'group', grp, 'source', source, 'kind', kind,
         'start', health_store.stamp_text(start_at, start_offset), 'end', health_store.stamp_text(end_at, end_offset),
         'value', value, 'unit', unit, 'name', category_name, 'activityType', activity_type,
         'activityName', activity_name, 'durationSeconds', duration_s, 'distanceMeters', distance_m,
         'activeEnergyKilocalories', energy_kcal, 'Min', value_min, 'Max', value_max))
       || coalesce(kept, '{}'::jsonb)
       || CASE WHEN context IS NOT NULL OR created_s IS NOT NULL
               THEN jsonb_build_object('healthExport',
                      coalesce(context, '{}'::jsonb)
                      || jsonb_strip_nulls(jsonb_build_object(
                           'value', CASE WHEN NOT coalesce(kept->'healthExport' ? 'value', false)
                                         THEN coalesce(value::text, kept->>'value') END,
                           'creationDate', health_store.export_stamp_text(end_at + make_interval(secs => created_s), end_offset)))
                      || coalesce(kept->'healthExport', '{}'::jsonb))
               ELSE '{}'::jsonb END;

COMMENT ON FUNCTION health_store.full_payload(uuid, text, text, text, text, text, timestamptz, smallint, timestamptz, smallint, double precision, text, text, integer, text, double precision, double precision, double precision, double precision, double precision, jsonb, jsonb, integer) IS
  'A sample''s object exactly as sent, rebuilt from its columns, the payload compact_payload kept and an imported record''s shared members and creation date.';

-- Today's date in a time zone; with none (NULL), in the UTC offset the person's phone wrote its
-- latest batch in (persons.sent_offset, minutes east of UTC: the offset the samples' days are
-- taken in then); with neither, the date in UTC−12 — the last place on Earth where a day ends,
-- so a day counts as partial until it is over everywhere.
CREATE OR REPLACE FUNCTION health_store.today_in(tz text, sent_offset smallint) RETURNS date
LANGUAGE sql STABLE PARALLEL SAFE
RETURN coalesce((now() AT TIME ZONE tz)::date,
                ((now() AT TIME ZONE 'UTC') + make_interval(mins => sent_offset))::date,
                ((now() AT TIME ZONE 'UTC') - interval '12 hours')::date);

COMMENT ON FUNCTION health_store.today_in(text, smallint) IS
  'Today''s date in time zone tz; with none (NULL) in the UTC offset sent_offset (minutes east of UTC: the person''s phone''s); with neither the date in UTC−12, so a day stays partial until it is over everywhere.';

-- When a day begins in a time zone or offset, with today_in's fallback (UTC−12): the instants of
-- that day are those from its start to the next day's.
CREATE OR REPLACE FUNCTION health_store.day_start_in(day date, tz text, sent_offset smallint) RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE
RETURN coalesce(day::timestamp AT TIME ZONE tz,
                (day::timestamp - make_interval(mins => sent_offset)) AT TIME ZONE 'UTC',
                (day::timestamp + interval '12 hours') AT TIME ZONE 'UTC');

COMMENT ON FUNCTION health_store.day_start_in(date, text, smallint) IS
  'When day begins in time zone tz; with none (NULL) in the UTC offset sent_offset; with neither in UTC−12 (the frame of today_in).';

-- Whether a day is not over yet in a time zone or offset (today_in): the is_partial of every
-- daily view, each joining the person's health_store.settings for tz and health_store.persons
-- for sent_offset.
CREATE OR REPLACE FUNCTION health_store.is_partial_in(day date, tz text, sent_offset smallint) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
RETURN day >= health_store.today_in(tz, sent_offset);

COMMENT ON FUNCTION health_store.is_partial_in(date, text, smallint) IS
  'True while the day is not over in time zone tz, or with none in the offset sent_offset, or with neither everywhere: day >= health_store.today_in(tz, sent_offset). The is_partial of every daily view.';

-- The frame a person's days are counted in: their time zone (settings) and their phone's UTC
-- offset (persons.sent_offset), either NULL when there is none; what health.today,
-- health.is_partial and health.day_start give to the rules above.
CREATE OR REPLACE FUNCTION health_store.frame_of(p_person text, OUT tz text, OUT sent_offset smallint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  tz := (SELECT s.time_zone FROM health_store.settings s WHERE s.person = p_person);
  sent_offset := (SELECT p.sent_offset FROM health_store.persons p WHERE p.person = p_person);
END
$$;

COMMENT ON FUNCTION health_store.frame_of(text) IS
  'A person''s frame for days: their time zone and their phone''s UTC offset (minutes east), each NULL when there is none.';

-- Today for a person, for users (psql, the sql/ queries): health_store.today_in of their time
-- zone, or with none of their phone's offset. Security definer: a reader login may ask without
-- reading health_store.settings or health_store.persons itself.
CREATE OR REPLACE FUNCTION health.today(person text) RETURNS date
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
RETURN (SELECT health_store.today_in(f.tz, f.sent_offset) FROM health_store.frame_of(today.person) f);

COMMENT ON FUNCTION health.today(text) IS
  'Today''s date for a person: in their time zone (health.settings), or with none set in the UTC offset their phone wrote its latest healthd batch in, or with neither the date in UTC−12, so a day stays partial until it is over everywhere. Days on or after it are partial.';

-- When a person's day begins, for users: in their time zone, or with none in their phone's
-- offset (the frame of health.today). A batch was received on day D when received_at lies from
-- health.day_start(p, D) to health.day_start(p, D + 1).
CREATE OR REPLACE FUNCTION health.day_start(person text, day date) RETURNS timestamptz
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
RETURN (SELECT health_store.day_start_in(day_start.day, f.tz, f.sent_offset) FROM health_store.frame_of(day_start.person) f);

COMMENT ON FUNCTION health.day_start(text, date) IS
  'When a person''s local day begins: in their time zone (health.settings), or with none set in the UTC offset their phone wrote its latest healthd batch in, or with neither in UTC−12 (the frame of health.today).';

-- Whether a person's day is not over yet, for users: the rule the daily views' is_partial uses.
CREATE OR REPLACE FUNCTION health.is_partial(person text, day date) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
RETURN (SELECT health_store.is_partial_in(is_partial.day, f.tz, f.sent_offset) FROM health_store.frame_of(is_partial.person) f);

COMMENT ON FUNCTION health.is_partial(text, date) IS
  'True while the day is not over for the person (day >= health.today(person): in their time zone, or their phone''s offset with none), as every daily view''s is_partial: leave such days out of averages.';

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
-- caller's join), their starts are less than a second apart, and so are their ends where both
-- are given (the export writes whole seconds, healthd milliseconds; health_store.twin_end gives
-- none for a Health Auto Export point, which the app sends as one instant), and their typed
-- values are equal to 1e-9 of the larger (an export converts km and mi to m, lb to kg) — or,
-- with no typed value on either side (types outside the catalog, workouts), their payload
-- values are equal (or both absent). Written with the start range first, so an index on
-- start_at finds the candidates.
CREATE OR REPLACE FUNCTION health_store.is_twin(h_start timestamptz, h_end timestamptz, h_value double precision, h_payload_value jsonb,
                                                x_start timestamptz, x_end timestamptz, x_value double precision, x_payload_value jsonb)
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
RETURN h_start > x_start - interval '1 second' AND h_start < x_start + interval '1 second'
   AND (h_end IS NULL OR x_end IS NULL OR (h_end > x_end - interval '1 second' AND h_end < x_end + interval '1 second'))
   AND CASE WHEN h_value IS NULL AND x_value IS NULL THEN h_payload_value IS NOT DISTINCT FROM x_payload_value
            ELSE coalesce(abs(h_value - x_value) <= 1e-9 * greatest(abs(h_value), abs(x_value)), false) END;

COMMENT ON FUNCTION health_store.is_twin(timestamptz, timestamptz, double precision, jsonb, timestamptz, timestamptz, double precision, jsonb) IS
  'Twins (one reading from two ways in): starts less than a second apart, ends too where both are given (NULL: not compared), and the same reading (typed values equal to 1e-9 of the larger, or with no typed value on either side the payload values equal). The type is the caller''s join.';

-- The end a twin comparison reads of a sample: none (NULL) for a Health Auto Export sample but
-- a workout — the app sends a point as one instant, and a sleep segment's twin is its start and
-- stage — else its end.
CREATE OR REPLACE FUNCTION health_store.twin_end(origin health_store.sample_origin, kind text, end_at timestamptz)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN origin = 'hae' AND kind IS DISTINCT FROM 'workout' THEN NULL ELSE end_at END;

COMMENT ON FUNCTION health_store.twin_end(health_store.sample_origin, text, timestamptz) IS
  'The end health_store.is_twin compares for a sample: NULL (not compared) for a Health Auto Export sample other than a workout, else its end.';

-- A summarized Health Auto Export sample: a bucket's total (or a night's stage) merged across
-- the devices of its source. It is one more source for the per-source winner, never a twin of
-- another way's sample: the decoder marks it with the key haeBucket (its grouping) in the
-- payload. The partial index sample_rows_hae_points repeats this expression.
CREATE OR REPLACE FUNCTION health_store.is_bucket(origin health_store.sample_origin, payload jsonb)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN origin = 'hae' AND coalesce(payload ? 'haeBucket', false);

COMMENT ON FUNCTION health_store.is_bucket(health_store.sample_origin, jsonb) IS
  'True for a summarized Health Auto Export sample (a bucket, or a night''s stage; payload key haeBucket): never a twin.';

-- Which copy of a sample wins when two origins hold the same uuid: a healthd copy replaces
-- any other, a Stridee body replaces its own earlier copy, Health Auto Export's or an export's,
-- Health Auto Export its own or an export's, an export only its own.
CREATE OR REPLACE FUNCTION health_store.origin_rank(origin health_store.sample_origin) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE origin WHEN 'healthd' THEN 4 WHEN 'stridee' THEN 3 WHEN 'hae' THEN 2 WHEN 'export' THEN 1 END;

COMMENT ON FUNCTION health_store.origin_rank(health_store.sample_origin) IS
  'Precedence of a sample''s origin when two copies share a uuid: healthd over stridee over hae over export.';

-- Where an arriving sample stands against its held twins of other ways in (health_store.is_twin):
-- its origin's rank, but a Health Auto Export workout stands below every other way in: it is the
-- held workout it twins (CONTRACT.md §9: counted once, none of that workout's fields
-- overwritten; its heart rate stream and route fill what that workout lacks), whereas its points
-- replace imported records as any pushed sample does (§5).
CREATE OR REPLACE FUNCTION health_store.arriving_rank(origin health_store.sample_origin, kind text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN origin = 'hae' AND kind = 'workout' THEN 0 ELSE health_store.origin_rank(origin) END;

COMMENT ON FUNCTION health_store.arriving_rank(health_store.sample_origin, text) IS
  'Where an arriving sample stands against its held twins: its origin''s rank (origin_rank), but a Health Auto Export workout below every way in (it is the held workout it twins).';

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
REVOKE EXECUTE ON FUNCTION health.today(text), health.is_partial(text, date), health.day_start(text, date) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION health.today(text), health.is_partial(text, date), health.day_start(text, date) TO health_reader;
