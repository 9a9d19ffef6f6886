-- The index on every sample's end served one lookup only, a person's newest sample end after a
-- sample was replaced or deleted (health_store.note_newest_end); every batch of new samples paid
-- for keeping it (2.5 ms of 40 for 1000 samples, and ~30 bytes a sample on disk). The lookup now
-- reads each series' latest starts and, for the few samples longer than an hour, which may end
-- long after they start, this index of their ends alone.
CREATE INDEX sample_rows_long_ends ON health_store.sample_rows (person, end_at)
  WHERE end_at - start_at > interval '1 hour';
DROP INDEX health_store.sample_rows_end;
