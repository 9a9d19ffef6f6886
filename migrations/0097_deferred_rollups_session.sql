-- The queue of rollup refreshes a grouping writer defers (apply_sample_changes with p_defer,
-- done by flush_rollups before the group's COMMIT) moves out of the database's tables into a
-- temporary table of the writer's own session, pg_temp.deferred_rollups, made on first use by
-- health_store.defer_rollups (25_rollup_upkeep.sql) with ON COMMIT DELETE ROWS. Its rows never
-- outlived their transaction, but as rows of a shared table each group's were deleted by its
-- flush and stayed behind as dead rows until autovacuum: about 32 MB after a year's export
-- (the import benchmark's database 285 MB right after the import, 253 MB once vacuumed), and
-- written to the WAL on their way. A temporary table is never WAL-logged, is emptied by
-- truncation at each COMMIT, and no other session can see it.

DROP TABLE health_store.deferred_rollups;
