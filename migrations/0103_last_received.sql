-- When each person last sent anything, kept on the person's row by every way in
-- (health_store.note_receipt): a delivery (a healthd request, a backlog file's batch, a batch of
-- an export, a Health Auto Export body) or a Stridee workout or wellness push, which records no
-- delivery. health.freshness, GET /stats, person list and serve's metrics read it; before, each
-- read the deliveries alone, so a person whose data came only through Stridee had never sent
-- anything.
ALTER TABLE health_store.persons ADD COLUMN last_received_at timestamptz;
UPDATE health_store.persons p SET last_received_at = r.at
FROM (SELECT x.person, max(x.at) AS at
      FROM (SELECT d.person, max(d.received_at) AS at FROM health_store.deliveries d GROUP BY d.person
            UNION ALL SELECT w.person, max(w.last_received_at) FROM health_store.stridee_workouts w GROUP BY w.person
            UNION ALL SELECT i.person, max(i.last_received_at) FROM health_store.wellness_items i GROUP BY i.person) x
      GROUP BY x.person) r
WHERE r.person = p.person;
COMMENT ON COLUMN health_store.persons.last_received_at IS
  'When the person last sent anything (timestamptz): the latest delivery or Stridee push received (health_store.note_receipt); NULL before any.';

-- The last batch is the delivery of that receipt: none when a Stridee push came after it.
UPDATE health_store.persons p SET last_delivery_id = NULL
FROM health_store.deliveries d
WHERE d.person = p.person AND d.delivery_id = p.last_delivery_id AND d.received_at < p.last_received_at;
COMMENT ON COLUMN health_store.persons.last_delivery_id IS
  'The delivery (health_store.deliveries.delivery_id) that was the person''s last receipt (persons.last_received_at), set by health_store.note_receipt; NULL before any, or when a Stridee push came after it.';
