-- Storing Stridee bodies faster (measured with the receiver benchmark's Stridee section,
-- docs/benchmarks.md): what the tables of 0023 hold changes, not what they mean.

-- A wellness item is kept as json, its exact text as sent, instead of jsonb: building jsonb
-- costs ~3 µs per JSON object, and a 2,000-item batch holds ~17,000 of them (each sample of an
-- HRV, respiration or blood-oxygen list, each sleep stage): ~50 ms of a 100 ms budget, where
-- json only validates (~5 ms per MB). The views read the fields with json's own operators and
-- cast to jsonb only what they show as jsonb. The views over the column and the store
-- function taking jsonb go first; repeatable/35_stridee.sql and 45_stridee_views.sql define
-- them again over json.
DROP VIEW IF EXISTS health.daily_healthkit_check, health.wellness_sleep, health.wellness_values, health.wellness;
-- store_wellness now takes the items as parallel arrays (repeatable/35_stridee.sql).
DROP FUNCTION IF EXISTS health_store.store_wellness(text, boolean, jsonb, timestamptz);
ALTER TABLE health_store.wellness_items ALTER COLUMN item TYPE json USING item::json;

-- Streams and routes are arrays of thousands of numbers: lz4 compresses a six-hour ride's
-- timestamps and heart rate about as well as the default pglz (130 KB and 1 KB against 100 KB
-- and 2 KB of 173 KB each) in a sixth of the time (5 ms against 32 ms a stream). A server
-- built without lz4 keeps pglz.
DO $$
BEGIN
  ALTER TABLE health_store.workout_streams
    ALTER COLUMN t SET COMPRESSION lz4, ALTER COLUMN v SET COMPRESSION lz4;
  ALTER TABLE health_store.workout_routes
    ALTER COLUMN t SET COMPRESSION lz4, ALTER COLUMN lat SET COMPRESSION lz4, ALTER COLUMN lon SET COMPRESSION lz4,
    ALTER COLUMN altitude_m SET COMPRESSION lz4, ALTER COLUMN speed_mps SET COMPRESSION lz4,
    ALTER COLUMN course_deg SET COMPRESSION lz4, ALTER COLUMN horizontal_accuracy_m SET COMPRESSION lz4,
    ALTER COLUMN vertical_accuracy_m SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'lz4 is not available in this PostgreSQL build: streams and routes stay compressed with pglz';
END
$$;
