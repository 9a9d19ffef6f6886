-- Tables for the Stridee formats (CONTRACT.md §4): connections, healthkit.v1 workouts with
-- their streams and GPS routes, healthkit.wellness.v1 items; and expiring tokens. The
-- functions and views over them are in migrations/repeatable/.

-- Where a held sample came from: the healthd app (HTTP or backlog files), a Stridee workout
-- body (a workout healthd has not sent), or the Health app's export. A healthd copy of a
-- sample always wins over the others.
ALTER TABLE health_store.samples
  ADD COLUMN origin text NOT NULL DEFAULT 'healthd' CHECK (origin IN ('healthd', 'stridee', 'export'));

-- A credential may expire (`token create --expires-in 1h`); NULL never does.
ALTER TABLE health_store.tokens ADD COLUMN expires_at timestamptz;

-- The Stridee connection of a person (PUT/GET/DELETE /v1/device/connections/apple): device
-- pushes are refused (409) while it is not active; a relay push connects the person.
CREATE TABLE health_store.connections (
  person           text PRIMARY KEY,
  provider         text NOT NULL DEFAULT 'apple' CHECK (provider = 'apple'),
  status           text NOT NULL CHECK (status IN ('active', 'disconnected')),
  connected_at     timestamptz NOT NULL,
  disconnected_at  timestamptz,
  updated_at       timestamptz NOT NULL
);

COMMENT ON TABLE health_store.connections IS
  'Stridee connection of each person: active or disconnected, since when. Data stored stays when disconnected.';

-- One healthkit.v1 workout body per person and HKWorkout uuid, the latest copy.
CREATE TABLE health_store.stridee_workouts (
  person             text NOT NULL,
  uuid               uuid NOT NULL,
  activity_type      integer NOT NULL,
  server_type        text NOT NULL,
  source_name        text,
  source_bundle_id   text,
  device_name        text,
  start_at           timestamptz NOT NULL,
  end_at             timestamptz NOT NULL,
  duration_s         double precision NOT NULL,
  distance_m         double precision,
  energy_kcal        double precision,
  -- The body's top-level members without its streams and route, as sent.
  header             jsonb NOT NULL,
  -- From the heartRate stream (NULL without one): its lowest, mean and highest value.
  heart_rate_min     double precision,
  heart_rate_mean    double precision,
  heart_rate_max     double precision,
  body_sha256        bytea NOT NULL,
  first_received_at  timestamptz NOT NULL,
  last_received_at   timestamptz NOT NULL,
  PRIMARY KEY (person, uuid)
);

COMMENT ON TABLE health_store.stridee_workouts IS
  'healthkit.v1 workout bodies, one per person and HKWorkout uuid (a resend replaces it whole); their streams are in workout_streams, their route in workout_routes.';

-- Sample streams of a workout, one row per workout and stream: the samples as two arrays in
-- time order (a six-hour ride holds ~20k heart-rate samples: one row, not 20k).
CREATE TABLE health_store.workout_streams (
  person  text NOT NULL,
  uuid    uuid NOT NULL,
  stream  text NOT NULL CHECK (stream IN ('heart_rate', 'running_power', 'cycling_power', 'cycling_cadence')),
  t       timestamptz[] NOT NULL,
  v       double precision[] NOT NULL CHECK (cardinality(v) = cardinality(t)),
  PRIMARY KEY (person, uuid, stream)
);

COMMENT ON TABLE health_store.workout_streams IS
  'Per workout and stream (heart_rate, running_power, cycling_power, cycling_cadence) the samples as parallel arrays in time order.';

-- A workout's GPS route, one row per workout: the points as parallel arrays in time order
-- (NULL elements where a point lacks an optional field), and what the views derive from them,
-- computed once when the route is written (health_store.route_measures).
CREATE TABLE health_store.workout_routes (
  person                 text NOT NULL,
  uuid                   uuid NOT NULL,
  origin                 text NOT NULL CHECK (origin IN ('stridee', 'export')),
  t                      timestamptz[] NOT NULL,
  lat                    double precision[] NOT NULL,
  lon                    double precision[] NOT NULL,
  altitude_m             double precision[] NOT NULL,
  speed_mps              double precision[] NOT NULL,
  course_deg             double precision[] NOT NULL,
  horizontal_accuracy_m  double precision[] NOT NULL,
  vertical_accuracy_m    double precision[] NOT NULL,
  points                 integer NOT NULL,
  distance_m             double precision,
  elevation_gain_m       double precision,
  CHECK (cardinality(t) = points AND cardinality(lat) = points AND cardinality(lon) = points
         AND cardinality(altitude_m) = points AND cardinality(speed_mps) = points
         AND cardinality(course_deg) = points AND cardinality(horizontal_accuracy_m) = points
         AND cardinality(vertical_accuracy_m) = points),
  PRIMARY KEY (person, uuid)
);

COMMENT ON TABLE health_store.workout_routes IS
  'GPS route of a workout (from a Stridee body or the Health app''s export), points as parallel arrays in time order, with distance and elevation gain computed when written.';

-- healthkit.wellness.v1 items, identity (person, kind, startTime): a resend replaces the item.
CREATE TABLE health_store.wellness_items (
  person             text NOT NULL,
  kind               text NOT NULL CHECK (kind IN ('daily', 'sleep', 'hrv', 'fitness', 'respiration', 'pulse_ox',
                                                   'body_composition', 'blood_pressure', 'skin_temperature')),
  start_at           timestamptz NOT NULL,
  calendar_date      date NOT NULL,
  end_at             timestamptz,
  tz_offset_s        integer,
  is_final           boolean NOT NULL,
  item_id            text,
  -- The whole item as sent.
  item               jsonb NOT NULL,
  first_received_at  timestamptz NOT NULL,
  last_received_at   timestamptz NOT NULL,
  PRIMARY KEY (person, kind, start_at)
);
CREATE INDEX wellness_items_person_date ON health_store.wellness_items (person, calendar_date);

COMMENT ON TABLE health_store.wellness_items IS
  'healthkit.wellness.v1 items, one per person, kind and start instant (a resend replaces it), kept whole.';

-- Rules as data: which field of which wellness kind is which metric, in which unit.
CREATE TABLE health_store.wellness_metrics (
  kind          text NOT NULL,
  field         text NOT NULL,
  metric        text NOT NULL,
  unit          text NOT NULL,
  -- True when the field is a samples list [{t, v}] rather than one number.
  from_samples  boolean NOT NULL,
  PRIMARY KEY (kind, field)
);

INSERT INTO health_store.wellness_metrics (kind, field, metric, unit, from_samples) VALUES
  ('daily',            'steps',              'steps',                         'count',       false),
  ('daily',            'distanceMeters',     'distance_m',                    'm',           false),
  ('daily',            'activeKilocalories', 'active_energy_kcal',            'kcal',        false),
  ('daily',            'basalKilocalories',  'basal_energy_kcal',             'kcal',        false),
  ('daily',            'flightsClimbed',     'flights_climbed',               'count',       false),
  ('daily',            'exerciseMinutes',    'exercise_min',                  'min',         false),
  ('daily',            'restingHeartRate',   'resting_heart_rate_bpm',        'count/min',   false),
  ('daily',            'avgHeartRate',       'heart_rate_mean_bpm',           'count/min',   false),
  ('daily',            'minHeartRate',       'heart_rate_min_bpm',            'count/min',   false),
  ('daily',            'maxHeartRate',       'heart_rate_max_bpm',            'count/min',   false),
  ('hrv',              'samples',            'hrv_sdnn_ms',                   'ms',          true),
  ('respiration',      'samples',            'respiratory_rate_per_min',      'count/min',   true),
  ('pulse_ox',         'samples',            'oxygen_saturation_pct',         '%',           true),
  ('fitness',          'vo2Max',             'vo2_max_ml_kg_min',             'ml/(kg*min)', false),
  ('body_composition', 'weightKg',           'body_mass_kg',                  'kg',          false),
  ('body_composition', 'bodyFatPercent',     'body_fat_pct',                  '%',           false),
  ('body_composition', 'bodyMassIndex',      'body_mass_index',               'count',       false),
  ('blood_pressure',   'systolic',           'blood_pressure_systolic_mmhg',  'mmHg',        false),
  ('blood_pressure',   'diastolic',          'blood_pressure_diastolic_mmhg', 'mmHg',        false),
  ('skin_temperature', 'celsius',            'skin_temperature_c',            'degC',        false);

COMMENT ON TABLE health_store.wellness_metrics IS
  'Which field of which healthkit.wellness.v1 kind is which metric of health.wellness_values, in which unit.';

ANALYZE health_store.wellness_metrics;
