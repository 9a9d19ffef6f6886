-- A sleep sample without a value (a stage the Health app's export names in a way this version
-- does not know: the mapping keeps the name in its payload and no value) counts in
-- daily_sleep.unknown_min from now on, as a stage healthd sends with a number and no name does
-- (health_store.key_rollup). The rollups of every person holding one are made again under the
-- new definition by health_store.after_migrate(), at the end of this migration run.
INSERT INTO health_store.migration_tasks (task, person)
SELECT DISTINCT 'rebuild_rollups', k.person
FROM health_store.series k
JOIN health_store.sample_rows s ON s.person = k.person AND s.series = k.series
WHERE k.type = 'HKCategoryTypeIdentifierSleepAnalysis' AND s.value IS NULL
ON CONFLICT DO NOTHING;
