-- The samples held, as everything that reads them sees them. The table health_store.sample_rows
-- keeps each sample compact (its series instead of type and source, only what the columns do
-- not rebuild as payload); these views give the columns back:
--
--   health_store.samples       every sample held (latest copy per person and uuid), with type,
--                              source and the payload exactly as sent; deleted ones too
--   health_store.live_samples  the samples Health still holds: the one meaning of "held and not
--                              deleted" every reader uses (rollups, coalescing, twins,
--                              freshness, /stats, people, the views)
--
-- The series and an imported record's export context (health_store.export_contexts) are joined
-- on their keys with LEFT JOINs, so a query that reads neither type, source nor payload does not
-- join them at all, and the payload is rebuilt only where it is read.
--
-- Repeatable file (docs/architecture.md, "Schema layout").

CREATE OR REPLACE VIEW health_store.samples AS
SELECT r.person, r.uuid, r.id, k.type, r.grp, r.kind, k.source,
       r.start_at, r.end_at, r.day, r.value, r.unit, r.category_name, r.activity_type, r.activity_name,
       r.duration_s, r.distance_m, r.energy_kcal,
       health_store.full_payload(r.uuid, k.type, r.grp, k.source, r.kind, r.id, r.start_at, r.start_offset, r.end_at,
                                 r.end_offset, r.value, r.unit, r.category_name, r.activity_type, r.activity_name,
                                 r.duration_s, r.distance_m, r.energy_kcal, r.value_min, r.value_max, r.payload,
                                 x.members, r.created_s) AS payload,
       r.first_received_at, r.last_received_at, r.export_id, r.origin, r.coalesced, r.deleted_at, r.deleted_by_export,
       r.series, r.start_offset, r.end_offset, r.value_min, r.value_max,
       -- What the payload keeps besides the columns: what a rule reading one key of the payload
       -- (health_store.is_bucket, a value no column holds) reads without rebuilding it all.
       r.payload AS kept
FROM health_store.sample_rows r
LEFT JOIN health_store.series k ON k.person = r.person AND k.series = r.series
LEFT JOIN health_store.export_contexts x ON x.person = r.person AND x.context = r.context;

COMMENT ON VIEW health_store.samples IS
  'Every sample held (the latest copy per person and uuid), deleted ones included, with its type, source and payload exactly as sent: health_store.sample_rows read whole.';

CREATE OR REPLACE VIEW health_store.live_samples AS
SELECT s.* FROM health_store.samples s WHERE s.deleted_at IS NULL;

COMMENT ON VIEW health_store.live_samples IS
  'The samples held that Health still holds (not marked deleted by a reconciliation): what every count, rollup and rule reads.';
