-- Rollup level 3: per person and local day, the daily_summary row (table
-- health_store.rollup_day, migration 0010), pivoted from level 2. The one place that names the
-- daily_summary metrics (as health.catalog.metric).
--
-- Repeatable file (docs/architecture.md, "Schema layout").

CREATE OR REPLACE VIEW health_store.calc_day AS
SELECT d.person, d.day,
       max(d.value) FILTER (WHERE d.metric = 'steps') AS steps,
       max(d.value) FILTER (WHERE d.metric = 'distance_m') AS distance_m,
       max(d.value) FILTER (WHERE d.metric = 'flights_climbed') AS flights_climbed,
       max(d.value) FILTER (WHERE d.metric = 'active_energy_kcal') AS active_energy_kcal,
       max(d.value) FILTER (WHERE d.metric = 'basal_energy_kcal') AS basal_energy_kcal,
       max(d.value) FILTER (WHERE d.metric = 'exercise_min') AS exercise_min,
       max(d.value) FILTER (WHERE d.metric = 'stand_min') AS stand_min,
       max(d.value) FILTER (WHERE d.metric = 'sleep_min') AS sleep_min,
       max(d.min_value) FILTER (WHERE d.metric = 'heart_rate_bpm') AS heart_rate_min,
       max(d.value) FILTER (WHERE d.metric = 'heart_rate_bpm') AS heart_rate_mean,
       max(d.max_value) FILTER (WHERE d.metric = 'heart_rate_bpm') AS heart_rate_max,
       max(d.value) FILTER (WHERE d.metric = 'resting_heart_rate_bpm') AS resting_heart_rate,
       max(d.value) FILTER (WHERE d.metric = 'walking_heart_rate_bpm') AS walking_heart_rate,
       max(d.value) FILTER (WHERE d.metric = 'hrv_sdnn_ms') AS hrv_sdnn_ms,
       100 * max(d.value) FILTER (WHERE d.metric = 'oxygen_saturation_fraction') AS oxygen_saturation_pct,
       max(d.value) FILTER (WHERE d.metric = 'respiratory_rate_per_min') AS respiratory_rate,
       max(d.value) FILTER (WHERE d.metric = 'vo2_max_ml_per_kg_min') AS vo2_max,
       max(d.value) FILTER (WHERE d.metric = 'body_temperature_c') AS body_temperature_c,
       max(d.value) FILTER (WHERE d.metric = 'blood_pressure_systolic_mmhg') AS blood_pressure_systolic,
       max(d.value) FILTER (WHERE d.metric = 'blood_pressure_diastolic_mmhg') AS blood_pressure_diastolic,
       max(d.value) FILTER (WHERE d.metric = 'body_mass_kg') AS body_mass_kg,
       max(d.value) FILTER (WHERE d.metric = 'height_m') AS height_m,
       max(d.value) FILTER (WHERE d.metric = 'body_mass_index') AS body_mass_index,
       100 * max(d.value) FILTER (WHERE d.metric = 'body_fat_fraction') AS body_fat_pct,
       max(d.value) FILTER (WHERE d.metric = 'lean_body_mass_kg') AS lean_body_mass_kg,
       max(d.workouts) FILTER (WHERE d.metric = 'workouts') AS workouts,
       max(d.duration_s) FILTER (WHERE d.metric = 'workouts') AS workout_duration_s,
       sum(d.samples) FILTER (WHERE d.rule IS NULL)::bigint AS unknown_samples
FROM health_store.rollup_day_type d
GROUP BY d.person, d.day;

COMMENT ON VIEW health_store.calc_day IS
  'Rollup level 3 computed from rollup_day_type: the daily_summary pivot, the only place its metrics are named (as health.catalog.metric).';
