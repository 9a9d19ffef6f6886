-- A night with only time in bed is no longer a night of 0 minutes asleep, and a source with no
-- minute asleep no longer wins a night over one with some (calc_day_type, docs/views.md): the
-- day values of sleep are made again from level 1, which is unchanged. Levels 2 and 3 of every
-- person with sleep are recomputed by health_store.after_migrate() under the new definitions,
-- at the end of this migration run.
ALTER TABLE health_store.migration_tasks DROP CONSTRAINT migration_tasks_task_check;
ALTER TABLE health_store.migration_tasks ADD CONSTRAINT migration_tasks_task_check
  CHECK (task IN ('rebuild_rollups', 'refresh_derived'));

INSERT INTO health_store.migration_tasks (task, person)
SELECT DISTINCT 'refresh_derived', d.person FROM health_store.rollup_day_type d WHERE d.rule = 'sleep'
ON CONFLICT DO NOTHING;
