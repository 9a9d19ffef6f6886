-- Duplicates per delivery: how much of each accepted batch the store already held.
--
-- Question:   Which batches were resent, and how much of them was new?
-- Views:      health.deliveries
-- Parameters: person  whose data (default: default)
--             days    deliveries received in this many days back (default: 14)
-- Run:        psql -X -v person=me -f sql/deliveries_duplicates.sql
-- Reading it: duplicates are normal and free: a retry the app never saw succeed, an
--             overlapping manual or Shortcuts export, or the one allowed resend. Samples are
--             upserted on their uuid, so no day total moves. replaced counts samples whose
--             content changed (the newer copy won); quarantined ones are in health.quarantine.
\if :{?person}
\else
\set person default
\endif
\if :{?days}
\else
\set days 14
\endif

SELECT d.received_at,
       d.origin,
       d.format,
       d.export_id,
       d.batch_sequence,
       d.is_final,
       d.basis,
       d.samples,
       d.inserted,
       d.duplicates,
       d.replaced,
       d.quarantined,
       round((100.0 * d.duplicates / nullif(d.samples, 0))::numeric, 1) AS duplicate_pct,
       d.file
FROM health.deliveries d
WHERE d.person = :'person'
  AND d.received_at > now() - make_interval(days => (:'days')::int)
  AND d.duplicates > 0
ORDER BY d.received_at DESC;
