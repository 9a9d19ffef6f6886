-- The public view of what Health Auto Export sends besides metrics and workouts
-- (docs/health-auto-export.md): exact columns, in order, each commented, granted to
-- health_reader. Its samples and workouts are in the views every way in fills.
--
-- Repeatable file (docs/architecture.md, "Schema layout").

CREATE OR REPLACE VIEW health.hae_records AS
SELECT r.person, r.received_at, r.kind, r.item
FROM health_store.hae_records r;

COMMENT ON VIEW health.hae_records IS
  'Items of Health Auto Export''s other arrays (symptoms, ecg, heartRateNotifications, stateOfMind, cycleTracking, medications, and any array the app adds), kept as sent: one row per person, array and item (an item sent again is one row).';
COMMENT ON COLUMN health.hae_records.person IS 'Whose data.';
COMMENT ON COLUMN health.hae_records.received_at IS 'When the body that first carried the item arrived (timestamptz).';
COMMENT ON COLUMN health.hae_records.kind IS 'The array the item came in: symptoms, ecg, heartRateNotifications, stateOfMind, cycleTracking, medications, or the name of another array of data.';
COMMENT ON COLUMN health.hae_records.item IS 'The item as sent (jsonb; its dates are the app''s text, yyyy-MM-dd HH:mm:ss ±hhmm).';

GRANT SELECT ON health.hae_records TO health_reader;
