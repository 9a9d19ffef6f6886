-- Export runs that have not (yet) arrived whole, with the batches still missing.
--
-- Question:   Did an export stop part-way, and which batches are missing?
-- Views:      health.export_runs, health.deliveries
-- Parameters: person  whose data (default: default)
-- Run:        psql -X -v person=me -f sql/export_runs_incomplete.sql
-- Reading it: a run whose final batch has not arrived is truncated, not invalid: what came is
--             stored. The app retries a failed batch for up to seven days (same exportId and
--             batchSequence), so a recent gap may still fill. An older one, or a batch
--             rejected with a 4xx, comes back only by exporting that range again from the app.
--             missing_batches lists the gaps up to the final (or highest) batch received.
\if :{?person}
\else
\set person default
\endif

WITH runs AS (
  SELECT r.*
  FROM health.export_runs r
  WHERE r.person = :'person' AND NOT r.is_complete
),
received AS (
  SELECT DISTINCT d.export_id, d.batch_sequence
  FROM health.deliveries d
  JOIN runs r ON r.export_id = d.export_id
  WHERE d.person = :'person'
)
SELECT r.export_id,
       r.basis,
       r.generated_at,
       r.first_received_at,
       r.last_received_at,
       r.batches_received,
       r.last_batch_sequence,
       r.final_batch_sequence,
       ARRAY(SELECT n FROM generate_series(1, coalesce(r.final_batch_sequence, r.last_batch_sequence)) AS g(n)
             WHERE NOT EXISTS (SELECT 1 FROM received x WHERE x.export_id = r.export_id AND x.batch_sequence = g.n)
             ORDER BY n) AS missing_batches,
       r.final_batch_sequence IS NULL AS final_batch_missing,
       r.samples,
       round(extract(epoch FROM now() - r.last_received_at)::numeric / 86400, 1) AS days_since_last_batch
FROM runs r
ORDER BY r.last_received_at DESC;
