-- Sample types this version does not know: kept and counted, shown here.
--
-- Question:   Is the app sending types that no view reads yet?
-- Views:      health.unknown_types
-- Parameters: person  whose data (default: default)
-- Run:        psql -X -v person=me -f sql/unknown_types_seen.sql
-- Reading it: a newer app may send types added after this version. Nothing is dropped: the
--             samples are in health.samples (typed columns empty, the whole object in
--             payload) and daily_summary.unknown_samples counts them per day.
\if :{?person}
\else
\set person default
\endif

SELECT u.type,
       u.kind,
       u.samples,
       u.first_start_at,
       u.last_start_at
FROM health.unknown_types u
WHERE u.person = :'person'
ORDER BY u.samples DESC, u.type COLLATE "C";
