-- Definitions the files before this one no longer hold, dropped after those files have
-- redefined whatever used them (a versioned file runs before the repeatable ones, so it
-- cannot drop what a definition re-applied later still reads today). Each drop names exactly
-- what it retires and is a no-op once it is gone.
--
-- Repeatable file (docs/architecture.md, "Schema layout").

-- is_partial reads the person's time zone in each view (10_rules.sql, 40_public_views.sql).
DROP VIEW IF EXISTS health_store.zone_today;
-- …and their phone's offset (migration 0108).
DROP FUNCTION IF EXISTS health_store.is_partial_in(date, text);
DROP FUNCTION IF EXISTS health_store.today_in(text);

-- The twins rule is health_store.is_twin (10_rules.sql).
DROP FUNCTION IF EXISTS health_store.twin_span(timestamptz, timestamptz, timestamptz, timestamptz);
DROP FUNCTION IF EXISTS health_store.same_reading(double precision, jsonb, double precision, jsonb);

-- Keys, spans, streams and routes travel as composite types now.
DROP FUNCTION IF EXISTS health_store.refresh_coverings(text, text[], text[], timestamptz[], timestamptz[]);
DROP FUNCTION IF EXISTS health_store.refresh_batch_rollups(text, date[], text[], text[], health_store.added_samples[]);
DROP FUNCTION IF EXISTS health_store.refresh_rollups(text, date[], text[], text[]);
DROP FUNCTION IF EXISTS health_store.refresh_day_types(text, date[], text[]);
DROP FUNCTION IF EXISTS health_store.store_route(text, uuid, text, timestamptz[], double precision[], double precision[],
                                                 double precision[], double precision[], double precision[],
                                                 double precision[], double precision[]);
DROP FUNCTION IF EXISTS health_store.store_export_route(text, uuid, timestamptz, timestamptz, timestamptz[], double precision[],
                                                        double precision[], double precision[], double precision[],
                                                        double precision[], double precision[], double precision[]);
DROP FUNCTION IF EXISTS health_store.store_workout(text, boolean, jsonb, bytea, timestamptz[], double precision[],
                                                   timestamptz[], double precision[], timestamptz[], double precision[],
                                                   timestamptz[], double precision[], timestamptz[], double precision[],
                                                   double precision[], double precision[], double precision[],
                                                   double precision[], double precision[], double precision[], timestamptz);

-- The receiver's credential is checked by the storing statement itself (64_people.sql): the
-- writers take p_credential, the check p_credential too.
DROP FUNCTION IF EXISTS health_store.hold_person(text);
DROP FUNCTION IF EXISTS health_store.store_batch(text, text, text, text, jsonb, jsonb, jsonb, bytea, timestamptz);
DROP FUNCTION IF EXISTS health_store.set_connection(text, boolean, timestamptz);
DROP FUNCTION IF EXISTS health_store.store_workout(text, boolean, jsonb, bytea, health_store.workout_stream[],
                                                   health_store.workout_route, timestamptz);
DROP FUNCTION IF EXISTS health_store.store_wellness(text, boolean, text[], timestamptz[], text[], timestamptz[], bigint[],
                                                    boolean[], text[], json[], timestamptz);

-- A level-1 total is taken from the aggregates themselves (20_rollup_source.sql).
DROP FUNCTION IF EXISTS health_store.source_total(text, numeric, numeric);

-- The write path as stages (30_store_batch.sql): the samples in health_store.sample_rows,
-- origins as enums, deferral an argument, twins found once by incoming_samples.
DROP FUNCTION IF EXISTS health_store.refresh_rollups(text, health_store.rollup_key[]);
DROP FUNCTION IF EXISTS health_store.store_samples(text, jsonb, text, timestamptz, uuid);
DROP FUNCTION IF EXISTS health_store.store_batch(text, text, boolean, text, text, jsonb, jsonb, jsonb, bytea, timestamptz);
DROP FUNCTION IF EXISTS health_store.drop_pushed_twins(text, jsonb);
DROP FUNCTION IF EXISTS health_store.drop_export_twins(text, jsonb);
DROP FUNCTION IF EXISTS health_store.revive_pushed_twins(text, jsonb);
DROP FUNCTION IF EXISTS health_store.store_route(text, uuid, text, health_store.workout_route);
DROP FUNCTION IF EXISTS health_store.origin_rank(text);

-- Health Auto Export (37_hae.sql): the write path reads Min and Max and finds twins of any two
-- ways in, ranked; rollup level 1 reads the extremes; the twins a sample replaces are dropped
-- by drop_lower_twins, routes and streams moved.
DROP FUNCTION IF EXISTS health_store.typed_samples(jsonb, text);
DROP FUNCTION IF EXISTS health_store.typed_samples(jsonb, text, health_store.sample_origin);
-- A quantity typed only in its catalog unit: the catalog's units are an argument too.
DROP FUNCTION IF EXISTS health_store.typed_samples(jsonb, text, health_store.sample_origin, text[], text[], text[]);
DROP FUNCTION IF EXISTS health_store.drop_imported_twins(text, health_store.incoming_sample[]);
DROP FUNCTION IF EXISTS health_store.sample_facts_of(text, double precision, timestamptz, timestamptz, uuid, integer,
                                                     double precision, double precision, double precision);
DROP FUNCTION IF EXISTS health_store.compact_payload(jsonb, uuid, text, text, text, text, text, smallint, smallint,
                                                     double precision, text, text, integer, text, double precision,
                                                     double precision, double precision);
DROP FUNCTION IF EXISTS health_store.compact_payload(jsonb, text, uuid, smallint, smallint, text, double precision, text, text,
                                                     text, integer, text, text, double precision, text, double precision,
                                                     text, double precision);
DROP FUNCTION IF EXISTS health_store.full_payload(uuid, text, text, text, text, text, timestamptz, smallint, timestamptz,
                                                  smallint, double precision, text, text, integer, text, double precision,
                                                  double precision, double precision, jsonb);
-- Since 0096 (export contexts) both take an imported record's shared members and creation date.
DROP FUNCTION IF EXISTS health_store.compact_payload(jsonb, text, uuid, smallint, smallint, text, double precision, text, text,
                                                     text, integer, text, text, double precision, text, double precision,
                                                     text, double precision, text, double precision, text, double precision);
DROP FUNCTION IF EXISTS health_store.full_payload(uuid, text, text, text, text, text, timestamptz, smallint, timestamptz,
                                                  smallint, double precision, text, text, integer, text, double precision,
                                                  double precision, double precision, double precision, double precision,
                                                  jsonb);

-- Rollup level 1's aggregates are health_store.key_rollup, a set-returning function the planner
-- inlines (20_rollup_source.sql).
DROP FUNCTION IF EXISTS health_store.source_rollup(text, health_store.sample_facts[]);
