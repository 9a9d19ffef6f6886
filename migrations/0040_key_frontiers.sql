-- The coalescing check's shortcut (repeatable/24_coalescing.sql): per person, type and source
-- of rule total, the latest end of any sample held. A batch whose samples of a key all start
-- after it can only cover, or be covered by, samples of its own, so the check reads nothing
-- else for that key. Never lower than the true latest end (it only ever grows).
CREATE TABLE health_store.key_frontiers (
  person      text NOT NULL,
  type        text NOT NULL,
  source      text NOT NULL,
  latest_end  timestamptz NOT NULL,
  PRIMARY KEY (person, type, source)
);

COMMENT ON TABLE health_store.key_frontiers IS
  'Latest end of the samples held per person, type and source of rule total (never shrinks): a batch entirely after it needs no look at the samples held.';

INSERT INTO health_store.key_frontiers (person, type, source, latest_end)
SELECT s.person, s.type, s.source, max(s.end_at)
FROM health_store.samples s
JOIN health_store.catalog c ON c.type = s.type AND c.rule = 'total'
GROUP BY s.person, s.type, s.source;
