-- Each person's newest sample end, kept on the person's row by the write path: health.freshness
-- and /stats read it instead of searching the samples (on Citus a query for one person then
-- reaches one shard: docs/scaling.md).
ALTER TABLE health_store.persons ADD COLUMN newest_end_at timestamptz;
UPDATE health_store.persons p SET newest_end_at = s.newest
FROM (SELECT x.person, max(x.end_at) AS newest FROM health_store.samples x WHERE x.deleted_at IS NULL GROUP BY x.person) s
WHERE s.person = p.person;
COMMENT ON COLUMN health_store.persons.newest_end_at IS
  'The latest end of any sample held for the person, samples Health deleted left out (health_store.note_newest_end); NULL when none.';
