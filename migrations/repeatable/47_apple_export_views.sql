-- The public view of the Health app's export (docs/apple-export.md): exact columns, in order, each
-- commented, granted to health_reader. Imported records, workouts and routes appear in the
-- views every sample appears in (40_public_views.sql, 45_stridee_views.sql).
--
-- Repeatable file (docs/architecture.md, "Schema layout").

---------------------------------------------------------------------------------------------
-- health.activity_summaries
CREATE OR REPLACE VIEW health.activity_summaries AS
SELECT a.person, a.day, a.active_energy_kcal, a.active_energy_goal_kcal, a.exercise_min, a.exercise_goal_min,
       a.stand_hours, a.stand_goal_hours
FROM health_store.activity_summaries a;

COMMENT ON VIEW health.activity_summaries IS
  'The Activity rings of each day as the Health app summed them (ActivitySummary elements of an imported export): one row per person and day. Apple''s own day totals, not sums of samples; a later import replaces a day.';
COMMENT ON COLUMN health.activity_summaries.person IS 'Whose data.';
COMMENT ON COLUMN health.activity_summaries.day IS 'The summary''s day (dateComponents): the user''s local date as the phone counted it.';
COMMENT ON COLUMN health.activity_summaries.active_energy_kcal IS 'Move ring: active energy burned that day, in kilocalories; NULL when not recorded.';
COMMENT ON COLUMN health.activity_summaries.active_energy_goal_kcal IS 'Move goal of that day, in kilocalories; NULL when none was set.';
COMMENT ON COLUMN health.activity_summaries.exercise_min IS 'Exercise ring: minutes of brisk activity that day; NULL when not recorded.';
COMMENT ON COLUMN health.activity_summaries.exercise_goal_min IS 'Exercise goal of that day, in minutes; NULL when none was set.';
COMMENT ON COLUMN health.activity_summaries.stand_hours IS 'Stand ring: hours with at least a minute of standing and moving; NULL when not recorded.';
COMMENT ON COLUMN health.activity_summaries.stand_goal_hours IS 'Stand goal of that day, in hours; NULL when none was set.';

---------------------------------------------------------------------------------------------
GRANT SELECT ON health.activity_summaries TO health_reader;
