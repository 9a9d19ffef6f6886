-- Quarantined samples, grouped by reason.
--
-- Question:   Did the app send samples the store could not accept, and why?
-- Views:      health.quarantine
-- Parameters: person  whose data (default: default)
-- Run:        psql -X -v person=me -f sql/quarantine_reasons.sql
-- Reading it: a sample that breaks the contract (a key missing or mistyped, a uuid that is
--             not a UUID, a malformed timestamp) is kept verbatim with the reason, and the
--             rest of its batch is stored. example_raw is one such sample exactly as sent.
\if :{?person}
\else
\set person default
\endif

SELECT q.reason,
       count(*) AS samples,
       min(q.received_at) AS first_received_at,
       max(q.received_at) AS last_received_at,
       count(DISTINCT q.export_id) AS export_runs,
       (array_agg(q.raw ORDER BY q.received_at DESC, q.position))[1] AS example_raw
FROM health.quarantine q
WHERE q.person = :'person'
GROUP BY q.reason
ORDER BY count(*) DESC, q.reason COLLATE "C";
