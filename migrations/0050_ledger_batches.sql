-- The ledger (health_store.ingested_files) now has one writer and one meaning for every column,
-- whoever read the file (Sources/Warehouse/FileLedger.swift). `batches` counts deliveries:
-- the batches stored through store_batch, as ingest always counted them. import-apple-health
-- counted every transaction's worth of an export, with or without a delivery (an empty last
-- one, one of activity summaries only); the rows it wrote take the count of their deliveries.
UPDATE health_store.ingested_files f
SET batches = (SELECT count(*) FROM health_store.deliveries d
               WHERE d.person = f.person AND d.origin = 'export' AND d.file = f.path)
WHERE f.format = 'apple-export';

COMMENT ON COLUMN health_store.ingested_files.batches IS
  'Deliveries stored from the file over every run (batches through store_batch).';
