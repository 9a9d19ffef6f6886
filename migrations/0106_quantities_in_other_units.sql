-- A quantity of a catalog type sent in another unit than the catalog's (a hand-made file of
-- kilometres for a type counted in metres) is no longer typed (repeatable 30_store_batch.sql,
-- typed_samples): like a known type sent with another kind, it counts only in samples, where
-- it was summed and compared as if in the catalog's unit. The samples held so lose their typed
-- value and unit, which go back into their payload (what the payload had kept as sent stays:
-- each is given back as it was sent), and the rollups of their people are made again by
-- health_store.after_migrate(), at the end of this migration run.
SET LOCAL extra_float_digits = 1;

INSERT INTO health_store.migration_tasks (task, person)
SELECT DISTINCT 'rebuild_rollups', k.person
FROM health_store.series k
JOIN health_store.catalog c ON c.type = k.type AND c.kind = 'quantity'
JOIN health_store.sample_rows s ON s.person = k.person AND s.series = k.series
WHERE s.kind = 'quantity' AND s.value IS NOT NULL AND s.unit IS DISTINCT FROM c.unit
ON CONFLICT DO NOTHING;

-- The payload's keys from immutable functions only (jsonb_build_object and to_jsonb are stable,
-- which Citus refuses with column references in an UPDATE): a number's text as written by
-- float8 output (full_payload's digits), the unit as a JSON string by jsonb_object.
UPDATE health_store.sample_rows s
SET payload = jsonb_strip_nulls(jsonb_object(ARRAY['unit', s.unit]))
              || coalesce(('{"value":' || s.value::text || '}')::jsonb, '{}'::jsonb)
              || coalesce(('{"Min":' || s.value_min::text || '}')::jsonb, '{}'::jsonb)
              || coalesce(('{"Max":' || s.value_max::text || '}')::jsonb, '{}'::jsonb)
              || coalesce(s.payload, '{}'::jsonb),
    value = NULL, unit = NULL, value_min = NULL, value_max = NULL
FROM health_store.series k
JOIN health_store.catalog c ON c.type = k.type AND c.kind = 'quantity'
WHERE s.person = k.person AND s.series = k.series
  AND s.kind = 'quantity' AND s.value IS NOT NULL AND s.unit IS DISTINCT FROM c.unit;
