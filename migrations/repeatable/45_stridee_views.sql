-- The public views of the Stridee formats and of workout routes (docs/stridee.md): exact
-- columns, in order, each commented, granted to health_reader. health.workouts (with the
-- columns these formats add) is in 40_public_views.sql.
--
-- Routes and streams are stored one row per workout with the points as arrays
-- (health_store.workout_routes, health_store.workout_streams); these views unnest them.
-- Wellness items are kept as json, the exact text sent (0025_stridee_storage.sql says why):
-- the views read them with json's operators.
--
-- Repeatable file (docs/architecture.md, "Schema layout").

---------------------------------------------------------------------------------------------
-- health.workout_route_points
CREATE OR REPLACE VIEW health.workout_route_points AS
SELECT r.person, r.uuid, p.seq, p.t, p.lat, p.lon, p.altitude_m, p.speed_mps, p.course_deg,
       p.horizontal_accuracy_m, p.vertical_accuracy_m
FROM health_store.workout_routes r
-- The route of a workout Health deleted goes with it.
LEFT JOIN health_store.samples w ON w.person = r.person AND w.uuid = r.uuid
CROSS JOIN LATERAL unnest(r.t, r.lat, r.lon, r.altitude_m, r.speed_mps, r.course_deg,
                          r.horizontal_accuracy_m, r.vertical_accuracy_m)
  WITH ORDINALITY AS p(t, lat, lon, altitude_m, speed_mps, course_deg, horizontal_accuracy_m, vertical_accuracy_m, seq)
WHERE w.deleted_at IS NULL;

COMMENT ON VIEW health.workout_route_points IS
  'Every GPS point of every workout route (from a Stridee body, the Health app''s export or Health Auto Export), in time order: one row per point. Draw one workout with WHERE person = … AND uuid = … ORDER BY seq.';
COMMENT ON COLUMN health.workout_route_points.person IS 'Whose workout.';
COMMENT ON COLUMN health.workout_route_points.uuid IS 'The workout (health.workouts.uuid).';
COMMENT ON COLUMN health.workout_route_points.seq IS 'Position of the point in the route, from 1, in time order.';
COMMENT ON COLUMN health.workout_route_points.t IS 'When the point was recorded (timestamptz).';
COMMENT ON COLUMN health.workout_route_points.lat IS 'Latitude in degrees (WGS 84), −90 to 90.';
COMMENT ON COLUMN health.workout_route_points.lon IS 'Longitude in degrees (WGS 84), −180 to 180.';
COMMENT ON COLUMN health.workout_route_points.altitude_m IS 'Altitude above sea level in metres; NULL when not recorded.';
COMMENT ON COLUMN health.workout_route_points.speed_mps IS 'Speed in metres per second as the device reported it; NULL when not recorded.';
COMMENT ON COLUMN health.workout_route_points.course_deg IS 'Course in degrees from true north; NULL when not recorded.';
COMMENT ON COLUMN health.workout_route_points.horizontal_accuracy_m IS 'Horizontal accuracy radius in metres; NULL when not recorded.';
COMMENT ON COLUMN health.workout_route_points.vertical_accuracy_m IS 'Vertical accuracy in metres; NULL when not recorded.';

---------------------------------------------------------------------------------------------
-- health.workout_routes
CREATE OR REPLACE VIEW health.workout_routes AS
SELECT r.person, r.uuid, s.day, r.points, r.distance_m, r.elevation_gain_m,
       jsonb_build_object('type', 'LineString', 'coordinates',
         (SELECT jsonb_agg(jsonb_build_array(c.lon, c.lat) ORDER BY c.i)
          FROM unnest(r.lon, r.lat) WITH ORDINALITY AS c(lon, lat, i))) AS geojson
FROM health_store.workout_routes r
LEFT JOIN health_store.samples s ON s.person = r.person AND s.uuid = r.uuid
-- The route of a workout Health deleted goes with it.
WHERE s.deleted_at IS NULL;

COMMENT ON VIEW health.workout_routes IS
  'One row per workout with a GPS route: its length, climb and shape as GeoJSON.';
COMMENT ON COLUMN health.workout_routes.person IS 'Whose workout.';
COMMENT ON COLUMN health.workout_routes.uuid IS 'The workout (health.workouts.uuid).';
COMMENT ON COLUMN health.workout_routes.day IS 'The workout''s local day (as in health.workouts: of its start, in the person''s time zone or the offset written).';
COMMENT ON COLUMN health.workout_routes.points IS 'Number of GPS points.';
COMMENT ON COLUMN health.workout_routes.distance_m IS 'Route length in metres: haversine distance on a sphere of radius 6,371,008.8 m, summed over consecutive points in time order.';
COMMENT ON COLUMN health.workout_routes.elevation_gain_m IS 'Metres climbed: the sum of rises between consecutive points that have an altitude, in time order; NULL when fewer than two have one.';
COMMENT ON COLUMN health.workout_routes.geojson IS 'The route as a GeoJSON LineString of [lon, lat] positions in time order.';

---------------------------------------------------------------------------------------------
-- health.workout_streams
CREATE OR REPLACE VIEW health.workout_streams AS
SELECT s.person, s.uuid, s.stream, x.t, x.v AS value, k.unit
FROM health_store.workout_streams s
JOIN health_store.stream_kinds k ON k.stream = s.stream
-- The streams of a workout Health deleted go with it.
LEFT JOIN health_store.samples w ON w.person = s.person AND w.uuid = s.uuid
CROSS JOIN LATERAL unnest(s.t, s.v) AS x(t, v)
WHERE w.deleted_at IS NULL;

COMMENT ON VIEW health.workout_streams IS
  'Samples recorded during a workout and sent in its Stridee body or by Health Auto Export (heartRateData, power and cadence series): heart rate, running power, cycling power and cadence, one row per sample.';
COMMENT ON COLUMN health.workout_streams.person IS 'Whose workout.';
COMMENT ON COLUMN health.workout_streams.uuid IS 'The workout (health.workouts.uuid).';
COMMENT ON COLUMN health.workout_streams.stream IS 'heart_rate, running_power, cycling_power or cycling_cadence.';
COMMENT ON COLUMN health.workout_streams.t IS 'When the sample was measured (timestamptz).';
COMMENT ON COLUMN health.workout_streams.value IS 'The value, in unit.';
COMMENT ON COLUMN health.workout_streams.unit IS 'count/min (heart rate), W (running and cycling power) or rpm (cycling cadence).';

---------------------------------------------------------------------------------------------
-- health.wellness
CREATE OR REPLACE VIEW health.wellness AS
SELECT w.person, w.kind, w.calendar_date, w.start_at, w.end_at, w.tz_offset_s, w.is_final, w.item_id,
       w.item::jsonb - ARRAY['kind', 'calendarDate', 'startTime', 'endTime', 'tzOffsetSeconds', 'final', 'id'] AS fields,
       w.first_received_at, w.last_received_at
FROM health_store.wellness_items w;

COMMENT ON VIEW health.wellness IS
  'Every healthkit.wellness.v1 item held: one row per person, kind and start instant (an item sent again replaced the first). Daily items are HealthKit''s own merged statistics, not sums of samples.';
COMMENT ON COLUMN health.wellness.person IS 'Whose data.';
COMMENT ON COLUMN health.wellness.kind IS 'daily, sleep, hrv, fitness, respiration, pulse_ox, body_composition, blood_pressure or skin_temperature.';
COMMENT ON COLUMN health.wellness.calendar_date IS 'calendarDate: the user''s local day the item belongs to, as sent.';
COMMENT ON COLUMN health.wellness.start_at IS 'startTime (timestamptz); with kind, the item''s identity.';
COMMENT ON COLUMN health.wellness.end_at IS 'endTime (timestamptz); NULL when not sent.';
COMMENT ON COLUMN health.wellness.tz_offset_s IS 'tzOffsetSeconds: the user''s UTC offset that day in seconds; NULL when not sent.';
COMMENT ON COLUMN health.wellness.is_final IS 'final: false while the value can still change (today''s daily item is resent as the day goes on).';
COMMENT ON COLUMN health.wellness.item_id IS 'id: the HealthKit sample''s UUID when the item is one sample; recorded, not a key.';
COMMENT ON COLUMN health.wellness.fields IS 'The kind''s own fields as sent (jsonb), unknown extra fields included.';
COMMENT ON COLUMN health.wellness.first_received_at IS 'When an item with this identity first arrived (timestamptz).';
COMMENT ON COLUMN health.wellness.last_received_at IS 'When the copy held arrived (timestamptz).';

---------------------------------------------------------------------------------------------
-- health.wellness_values
CREATE OR REPLACE VIEW health.wellness_values AS
SELECT w.person, w.kind, w.calendar_date, w.start_at, w.start_at AS measured_at, m.metric,
       (w.item->>m.field)::double precision AS value, m.unit, w.is_final
FROM health_store.wellness_items w
JOIN health_store.wellness_metrics m ON m.kind = w.kind AND NOT m.from_samples
WHERE json_typeof(w.item->m.field) = 'number'
UNION ALL
SELECT w.person, w.kind, w.calendar_date, w.start_at, (e.value->>'t')::timestamptz, m.metric,
       (e.value->>'v')::double precision, m.unit, w.is_final
FROM health_store.wellness_items w
JOIN health_store.wellness_metrics m ON m.kind = w.kind AND m.from_samples
CROSS JOIN LATERAL json_array_elements(CASE WHEN json_typeof(w.item->m.field) = 'array'
                                            THEN w.item->m.field ELSE '[]'::json END) AS e;

COMMENT ON VIEW health.wellness_values IS
  'Every number in the wellness items, one row each: a kind''s own fields (measured_at = start_at) and each entry of a samples list (measured_at = its t). Metric names state their unit. HRV is SDNN (hrv_sdnn_ms), never RMSSD.';
COMMENT ON COLUMN health.wellness_values.person IS 'Whose data.';
COMMENT ON COLUMN health.wellness_values.kind IS 'The item''s kind.';
COMMENT ON COLUMN health.wellness_values.calendar_date IS 'The item''s calendarDate (the user''s local day).';
COMMENT ON COLUMN health.wellness_values.start_at IS 'The item''s startTime (timestamptz): with kind, which item the value is from.';
COMMENT ON COLUMN health.wellness_values.measured_at IS 'When the value was measured: the item''s start for its own fields, the sample''s t for samples lists (timestamptz).';
COMMENT ON COLUMN health.wellness_values.metric IS 'steps, distance_m, active_energy_kcal, basal_energy_kcal, flights_climbed, exercise_min, resting_heart_rate_bpm, heart_rate_mean_bpm, heart_rate_min_bpm, heart_rate_max_bpm, hrv_sdnn_ms, respiratory_rate_per_min, oxygen_saturation_pct, vo2_max_ml_kg_min, body_mass_kg, body_fat_pct, body_mass_index, blood_pressure_systolic_mmhg, blood_pressure_diastolic_mmhg or skin_temperature_c.';
COMMENT ON COLUMN health.wellness_values.value IS 'The number as sent, in unit (pulse_ox and body fat in percent, 0–100).';
COMMENT ON COLUMN health.wellness_values.unit IS 'Unit of value: count, m, kcal, min, count/min, ms, %, ml/(kg*min), kg, mmHg or degC.';
COMMENT ON COLUMN health.wellness_values.is_final IS 'The item''s final: false while the value can still change.';

---------------------------------------------------------------------------------------------
-- health.wellness_sleep
CREATE OR REPLACE VIEW health.wellness_sleep AS
WITH stages AS (
  SELECT w.person, w.calendar_date, w.start_at, w.end_at, w.is_final,
         sum(x.minutes) FILTER (WHERE x.stage = 'core') AS light_min,
         sum(x.minutes) FILTER (WHERE x.stage = 'deep') AS deep_min,
         sum(x.minutes) FILTER (WHERE x.stage = 'rem') AS rem_min,
         sum(x.minutes) FILTER (WHERE x.stage = 'asleepUnspecified') AS unspecified_min,
         sum(x.minutes) FILTER (WHERE x.stage = 'awake') AS awake_min,
         sum(x.minutes) FILTER (WHERE x.stage = 'inBed') AS in_bed_min
  FROM health_store.wellness_items w
  LEFT JOIN LATERAL (
    SELECT e.value->>'stage' AS stage,
           extract(epoch FROM (e.value->>'end')::timestamptz - (e.value->>'start')::timestamptz)::double precision / 60 AS minutes
    FROM json_array_elements(CASE WHEN json_typeof(w.item->'stages') = 'array' THEN w.item->'stages' ELSE '[]'::json END) AS e
  ) x ON true
  WHERE w.kind = 'sleep'
  GROUP BY w.person, w.calendar_date, w.start_at, w.end_at, w.is_final
)
SELECT s.person, s.calendar_date AS day, s.start_at, s.end_at,
       coalesce(s.light_min, 0) + coalesce(s.deep_min, 0) + coalesce(s.rem_min, 0) + coalesce(s.unspecified_min, 0) AS asleep_min,
       coalesce(s.light_min, 0) AS light_min, coalesce(s.deep_min, 0) AS deep_min, coalesce(s.rem_min, 0) AS rem_min,
       coalesce(s.unspecified_min, 0) AS unspecified_min, coalesce(s.awake_min, 0) AS awake_min,
       coalesce(s.in_bed_min, 0) AS in_bed_min, s.is_final
FROM stages s;

COMMENT ON VIEW health.wellness_sleep IS
  'One row per sleep item of the wellness pushes, its stages in minutes. Apple''s core sleep is light sleep; in bed and awake are not sleep; asleepUnspecified counts toward asleep but no stage.';
COMMENT ON COLUMN health.wellness_sleep.person IS 'Whose data.';
COMMENT ON COLUMN health.wellness_sleep.day IS 'The item''s calendarDate: the user''s local day of waking, as sent.';
COMMENT ON COLUMN health.wellness_sleep.start_at IS 'The item''s startTime (timestamptz).';
COMMENT ON COLUMN health.wellness_sleep.end_at IS 'The item''s endTime (timestamptz); NULL when not sent.';
COMMENT ON COLUMN health.wellness_sleep.asleep_min IS 'Minutes asleep: light + deep + REM + unspecified.';
COMMENT ON COLUMN health.wellness_sleep.light_min IS 'Minutes in light sleep (stage core).';
COMMENT ON COLUMN health.wellness_sleep.deep_min IS 'Minutes in deep sleep (stage deep).';
COMMENT ON COLUMN health.wellness_sleep.rem_min IS 'Minutes in REM sleep (stage rem).';
COMMENT ON COLUMN health.wellness_sleep.unspecified_min IS 'Minutes asleep with no stage (stage asleepUnspecified: older watches, or the iPhone alone).';
COMMENT ON COLUMN health.wellness_sleep.awake_min IS 'Minutes awake (stage awake); not sleep.';
COMMENT ON COLUMN health.wellness_sleep.in_bed_min IS 'Minutes in bed (stage inBed); counts toward nothing.';
COMMENT ON COLUMN health.wellness_sleep.is_final IS 'The item''s final: false while the night can still change.';

---------------------------------------------------------------------------------------------
-- health.daily_healthkit_check
CREATE OR REPLACE VIEW health.daily_healthkit_check AS
WITH daily AS (
  -- HealthKit's own merged totals of each day: the daily item that started last that calendarDate.
  SELECT DISTINCT ON (w.person, w.calendar_date) w.person, w.calendar_date, w.item
  FROM health_store.wellness_items w
  WHERE w.kind = 'daily'
  ORDER BY w.person, w.calendar_date, w.start_at DESC
)
SELECT d.person, d.calendar_date AS day, m.metric, t.value AS warehouse_value,
       (d.item->>m.field)::double precision AS healthkit_value,
       t.value - (d.item->>m.field)::double precision AS difference
FROM daily d
JOIN health_store.wellness_metrics m
  ON m.kind = 'daily' AND m.metric IN ('steps', 'distance_m', 'active_energy_kcal', 'basal_energy_kcal', 'flights_climbed', 'exercise_min')
 AND json_typeof(d.item->m.field) = 'number'
JOIN health_store.rollup_day_type t
  ON t.person = d.person AND t.day = d.calendar_date AND t.metric = m.metric AND t.per_source_winner;

COMMENT ON VIEW health.daily_healthkit_check IS
  'The warehouse''s day totals beside HealthKit''s own merged statistics for the same day, where both exist: one row per person, day and metric. A large difference points at a source the warehouse lacks, or a coalescing.';
COMMENT ON COLUMN health.daily_healthkit_check.person IS 'Whose data.';
COMMENT ON COLUMN health.daily_healthkit_check.day IS 'Local day: the warehouse''s day (health.daily_totals) and the daily item''s calendarDate.';
COMMENT ON COLUMN health.daily_healthkit_check.metric IS 'steps, distance_m, active_energy_kcal, basal_energy_kcal, flights_climbed or exercise_min (units in the name; steps and flights a count).';
COMMENT ON COLUMN health.daily_healthkit_check.warehouse_value IS 'The warehouse''s day value from samples: the per-source winner''s total (health.daily_totals.value).';
COMMENT ON COLUMN health.daily_healthkit_check.healthkit_value IS 'HealthKit''s merged daily total: the field of the daily item with the latest startTime that calendarDate.';
COMMENT ON COLUMN health.daily_healthkit_check.difference IS 'warehouse_value − healthkit_value, in the metric''s unit.';

---------------------------------------------------------------------------------------------
GRANT SELECT ON
  health.workout_route_points, health.workout_routes, health.workout_streams, health.wellness,
  health.wellness_values, health.wellness_sleep, health.daily_healthkit_check
TO health_reader;
