-- The index of every imported record by person answered one question only, whether a person
-- holds imported records (health_store.may_hold_twins, before every pushed batch), and every
-- imported record paid for keeping it: one index entry each, 3.5 MB of a year's export (6.5
-- bytes a sample). The question is asked of the person's export deliveries now: every
-- imported record came in one (store_batch, origin export, since the export's first
-- migration, 0030), and deliveries go only with the person.
DROP INDEX health_store.sample_rows_imported;
