-- "Today" for a person with no time zone set is taken in the UTC offset their phone writes
-- (health_store.today_in): healthd writes every timestamp of a batch, generatedAt among them,
-- in the phone's offset at the moment of encoding (the reference, "Dates"), the offset each
-- sample's day is taken in when no zone is set. Before, such a person's day stayed partial
-- until it was over in UTC−12: yesterday counted as partial until noon UTC for everyone east
-- of it. health_store.note_receipt keeps the offset of the latest healthd batch on the
-- person's row; for the people held, it is the offset written in the end of the healthd sample
-- received last (one pass over the samples, once).
ALTER TABLE health_store.persons ADD COLUMN sent_offset smallint;
COMMENT ON COLUMN health_store.persons.sent_offset IS
  'Minutes east of UTC that the person''s phone wrote its latest healthd batch in (its generatedAt): the offset "today" is taken in while no time zone is set (health_store.today_in); NULL before any.';

UPDATE health_store.persons p SET sent_offset = l.end_offset
FROM (SELECT DISTINCT ON (s.person) s.person, s.end_offset
      FROM health_store.sample_rows s
      WHERE s.origin = 'healthd' AND s.end_offset IS NOT NULL
      ORDER BY s.person, s.last_received_at DESC, s.end_at DESC) l
WHERE l.person = p.person;
