-- The reference's catalog: 24 types in six groups, each with the rule its day value follows.
-- unit is the unit sent with the type's samples (none for sleep and workouts); metric names
-- the day value with its unit in it.
INSERT INTO health_store.catalog (position, grp, type, kind, unit, metric, rule) VALUES
  ( 1, 'activity', 'HKQuantityTypeIdentifierStepCount',                 'quantity', 'count',       'steps',                        'total'),
  ( 2, 'activity', 'HKQuantityTypeIdentifierDistanceWalkingRunning',    'quantity', 'm',           'distance_m',                   'total'),
  ( 3, 'activity', 'HKQuantityTypeIdentifierFlightsClimbed',            'quantity', 'count',       'flights_climbed',              'total'),
  ( 4, 'activity', 'HKQuantityTypeIdentifierActiveEnergyBurned',        'quantity', 'kcal',        'active_energy_kcal',           'total'),
  ( 5, 'activity', 'HKQuantityTypeIdentifierBasalEnergyBurned',         'quantity', 'kcal',        'basal_energy_kcal',            'total'),
  ( 6, 'activity', 'HKQuantityTypeIdentifierAppleExerciseTime',         'quantity', 'min',         'exercise_min',                 'total'),
  ( 7, 'activity', 'HKQuantityTypeIdentifierAppleStandTime',            'quantity', 'min',         'stand_min',                    'total'),
  ( 8, 'heart',    'HKQuantityTypeIdentifierHeartRate',                 'quantity', 'count/min',   'heart_rate_bpm',               'reading'),
  ( 9, 'heart',    'HKQuantityTypeIdentifierRestingHeartRate',          'quantity', 'count/min',   'resting_heart_rate_bpm',       'reading'),
  (10, 'heart',    'HKQuantityTypeIdentifierWalkingHeartRateAverage',   'quantity', 'count/min',   'walking_heart_rate_bpm',       'reading'),
  (11, 'heart',    'HKQuantityTypeIdentifierHeartRateVariabilitySDNN',  'quantity', 'ms',          'hrv_sdnn_ms',                  'reading'),
  (12, 'body',     'HKQuantityTypeIdentifierBodyMass',                  'quantity', 'kg',          'body_mass_kg',                 'latest'),
  (13, 'body',     'HKQuantityTypeIdentifierHeight',                    'quantity', 'm',           'height_m',                     'latest'),
  (14, 'body',     'HKQuantityTypeIdentifierBodyMassIndex',             'quantity', 'count',       'body_mass_index',              'latest'),
  (15, 'body',     'HKQuantityTypeIdentifierBodyFatPercentage',         'quantity', 'fraction',    'body_fat_fraction',            'latest'),
  (16, 'body',     'HKQuantityTypeIdentifierLeanBodyMass',              'quantity', 'kg',          'lean_body_mass_kg',            'latest'),
  (17, 'sleep',    'HKCategoryTypeIdentifierSleepAnalysis',             'category', NULL,          'sleep_min',                    'sleep'),
  (18, 'vitals',   'HKQuantityTypeIdentifierOxygenSaturation',          'quantity', 'fraction',    'oxygen_saturation_fraction',   'reading'),
  (19, 'vitals',   'HKQuantityTypeIdentifierRespiratoryRate',           'quantity', 'count/min',   'respiratory_rate_per_min',     'reading'),
  (20, 'vitals',   'HKQuantityTypeIdentifierVO2Max',                    'quantity', 'ml/(kg*min)', 'vo2_max_ml_per_kg_min',        'reading'),
  (21, 'vitals',   'HKQuantityTypeIdentifierBodyTemperature',           'quantity', 'degC',        'body_temperature_c',           'reading'),
  (22, 'vitals',   'HKQuantityTypeIdentifierBloodPressureSystolic',     'quantity', 'mmHg',        'blood_pressure_systolic_mmhg', 'reading'),
  (23, 'vitals',   'HKQuantityTypeIdentifierBloodPressureDiastolic',    'quantity', 'mmHg',        'blood_pressure_diastolic_mmhg','reading'),
  (24, 'workouts', 'HKWorkoutTypeIdentifier',                           'workout',  NULL,          'workouts',                     'workout');

CREATE VIEW health.catalog AS
SELECT type, grp, kind, unit, metric, rule
FROM health_store.catalog
ORDER BY position;

COMMENT ON VIEW health.catalog IS
  'The 24 sample types of healthd v1, their group, kind and unit, and the rule that makes their day value.';
COMMENT ON COLUMN health.catalog.type IS 'Apple type identifier, e.g. HKQuantityTypeIdentifierStepCount.';
COMMENT ON COLUMN health.catalog.grp IS 'healthd group the type belongs to: activity, heart, body, sleep, vitals or workouts.';
COMMENT ON COLUMN health.catalog.kind IS 'Sample kind: quantity, category or workout.';
COMMENT ON COLUMN health.catalog.unit IS 'Unit of the samples'' value as sent (fraction stays a fraction); NULL for sleep and workouts, which carry none.';
COMMENT ON COLUMN health.catalog.metric IS 'Name of the day value, with its unit in the name (steps are a count).';
COMMENT ON COLUMN health.catalog.rule IS 'How a day value is made: total (per-source winner of sums), sleep (per-source winner of minutes asleep), reading (min/mean/max across sources), latest (latest sample of the day) or workout (count and totals).';
GRANT SELECT ON health.catalog TO health_reader;
