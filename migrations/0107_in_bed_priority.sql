-- A fixed source priority no longer orders the sleep sources with no minute asleep (repeatable
-- 21_rollup_day_type.sql): a night with no sleep from any source shows the source with the most
-- time in bed whatever the priority, as CONTRACT §2 says, and losers at 0 minutes asleep follow
-- the sleepers in byte order. Levels 2 and 3 of the people with a sleep priority are made again
-- under the new definition by health_store.after_migrate(), at the end of this migration run.
INSERT INTO health_store.migration_tasks (task, person)
SELECT DISTINCT 'refresh_derived', p.person
FROM health_store.source_priorities p
WHERE p.type = 'HKCategoryTypeIdentifierSleepAnalysis'
ON CONFLICT DO NOTHING;
