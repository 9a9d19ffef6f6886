-- How recent each person's data is: last batch received, newest sample, and whether it is stale.
--
-- Question:   Is data still arriving from the phone?
-- Views:      health.freshness
-- Parameters: none (every person with at least one batch)
-- Run:        psql -X -f sql/freshness_status.sql
-- Reading it: the app delivers when iOS lets it run, typically within an hour of the data
--             reaching Health, so "a few hours ago" is normal and nothing here is current to
--             the minute. When is_stale, hint names the usual causes: Low Power Mode, the app
--             swiped away, a locked phone, the receiver unreachable, a rejected credential.
SELECT f.person,
       f.last_received_at,
       round(f.hours_since_last_batch::numeric, 1) AS hours_since_last_batch,
       f.newest_sample_end_at,
       f.last_basis,
       f.stale_after,
       f.is_stale,
       f.hint
FROM health.freshness f
ORDER BY f.person COLLATE "C";
