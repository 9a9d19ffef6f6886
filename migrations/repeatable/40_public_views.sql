-- The public views of schema health (docs/views.md): exact columns, in order, each
-- commented, granted to health_reader.
--
-- Per-day views read the rollups (20–25_rollup_*.sql), so they cost work proportional to the
-- days asked. `day` is always the person's local date: of start, of end for sleep, in the
-- person's time zone, or in the offset written in the sample when none is set
-- (health_store.sample_day). is_partial is the one rule health_store.is_partial_in, given the
-- person's time zone joined from health_store.settings and their phone's offset from
-- health_store.persons by the view itself (no function reads a table for a view:
-- docs/scaling.md).
--
-- A view may gain columns at its end; never rename, retype or drop one (users' queries rely on
-- them; ViewsSurfaceTests pins every column).
--
-- Repeatable file (docs/architecture.md, "Schema layout").

---------------------------------------------------------------------------------------------
-- health.catalog
CREATE OR REPLACE VIEW health.catalog AS
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

---------------------------------------------------------------------------------------------
-- The samples that are workouts (health_store.is_workout).
CREATE OR REPLACE VIEW health_store.workout_samples AS
SELECT s.*
FROM health_store.live_samples s
JOIN health_store.catalog c ON c.type = s.type
WHERE health_store.is_workout(c.rule, s.kind);

COMMENT ON VIEW health_store.workout_samples IS
  'Samples of the catalog''s workout rule sent as kind workout, but those Health deleted; health.workouts reads it.';

---------------------------------------------------------------------------------------------
-- health.samples
CREATE OR REPLACE VIEW health.samples AS
SELECT s.person, s.uuid, s.id, s.type, s.grp, s.kind, s.source, s.start_at, s.end_at, s.day,
       s.value, s.unit, s.category_name, s.activity_type, s.activity_name, s.duration_s,
       s.distance_m, s.energy_kcal, s.payload, s.first_received_at, s.last_received_at, s.export_id,
       s.deleted_at
FROM health_store.samples s;

COMMENT ON VIEW health.samples IS
  'Every sample held: one row per person and uuid, the latest copy sent. Instants are timestamptz (shown in the session time zone); day is the person''s local date.';
COMMENT ON COLUMN health.samples.person IS 'Whose sample: the person of the credential that sent it (default when no credential exists).';
COMMENT ON COLUMN health.samples.uuid IS 'Apple Health''s identifier of the sample; the key samples are upserted on, per person.';
COMMENT ON COLUMN health.samples.id IS 'healthd content fingerprint (64 hex characters); repeats by design, never a key.';
COMMENT ON COLUMN health.samples.type IS 'Apple type identifier as sent, e.g. HKQuantityTypeIdentifierStepCount; types outside health.catalog are kept too.';
COMMENT ON COLUMN health.samples.grp IS 'healthd group as sent: activity, heart, body, sleep, vitals or workouts.';
COMMENT ON COLUMN health.samples.kind IS 'Sample kind as sent: quantity, category or workout.';
COMMENT ON COLUMN health.samples.source IS 'Bundle identifier of the app or device that recorded the sample.';
COMMENT ON COLUMN health.samples.start_at IS 'When the reading began (timestamptz, an instant).';
COMMENT ON COLUMN health.samples.end_at IS 'When it ended (timestamptz); equal to start_at for an instantaneous reading.';
COMMENT ON COLUMN health.samples.day IS 'Local date the sample belongs to: of start_at (sleep: of end_at) in the person''s time zone, or in the UTC offset written in the sample when no zone is set.';
COMMENT ON COLUMN health.samples.value IS 'Quantity value in unit, or the category''s raw integer (sleep stage); NULL for workouts and unknown types.';
COMMENT ON COLUMN health.samples.unit IS 'Unit of a quantity value as sent (count, m, kcal, min, count/min, ms, kg, fraction, …); NULL otherwise.';
COMMENT ON COLUMN health.samples.category_name IS 'Name of a category value (inBed, asleepCore, …); NULL when the app had no name for it.';
COMMENT ON COLUMN health.samples.activity_type IS 'Workout: Apple HKWorkoutActivityType raw value.';
COMMENT ON COLUMN health.samples.activity_name IS 'Workout: activity name as sent (running, cycling, …); NULL when the app had none.';
COMMENT ON COLUMN health.samples.duration_s IS 'Workout: duration in seconds.';
COMMENT ON COLUMN health.samples.distance_m IS 'Workout: distance in metres; NULL when the workout recorded none.';
COMMENT ON COLUMN health.samples.energy_kcal IS 'Workout: active energy in kilocalories; NULL when the workout recorded none.';
COMMENT ON COLUMN health.samples.payload IS 'The whole sample object as sent, unknown keys included.';
COMMENT ON COLUMN health.samples.first_received_at IS 'When this uuid first arrived (timestamptz).';
COMMENT ON COLUMN health.samples.last_received_at IS 'When the copy held arrived (timestamptz): the latest copy with different content.';
COMMENT ON COLUMN health.samples.export_id IS 'exportId of the export run that sent the copy held.';
COMMENT ON COLUMN health.samples.deleted_at IS 'When reconciling with the Health app''s export found the sample deleted in Health (timestamptz, an instant; health.deleted_samples); NULL while Health holds it. A deleted sample counts in no other view.';

---------------------------------------------------------------------------------------------
-- health.daily_source_totals
CREATE OR REPLACE VIEW health.daily_source_totals AS
SELECT r.person, r.day, r.type, r.metric, r.unit, r.source, r.total::double precision AS total,
       (r.agg).samples, r.rank, r.rank = 1 AS is_winner,
       health_store.is_partial_in(r.day, st.time_zone, pr.sent_offset) AS is_partial
FROM health_store.rollup_source r
LEFT JOIN health_store.settings st ON st.person = r.person
LEFT JOIN health_store.persons pr ON pr.person = r.person
-- A night with no minute asleep from any source has no ranking, so no row (calc_day_type).
WHERE r.per_source_winner AND r.rank IS NOT NULL;

COMMENT ON VIEW health.daily_source_totals IS
  'Each source''s own day total for the per-source types (rules total and sleep), ranked: one row per person, local day, type and source. The winner (rank 1) is the day''s value in daily_totals; never add sources up. A night with no minute asleep from any source (time in bed only) has no sleep row.';
COMMENT ON COLUMN health.daily_source_totals.person IS 'Whose data.';
COMMENT ON COLUMN health.daily_source_totals.day IS 'Local date in the person''s time zone (written offsets when none is set); sleep counts on the day of waking.';
COMMENT ON COLUMN health.daily_source_totals.type IS 'Apple type identifier (a health.catalog type of rule total or sleep).';
COMMENT ON COLUMN health.daily_source_totals.metric IS 'Name of the day value, unit in the name (health.catalog.metric).';
COMMENT ON COLUMN health.daily_source_totals.unit IS 'Unit of total: the samples'' unit as sent (fraction stays a fraction), min for sleep.';
COMMENT ON COLUMN health.daily_source_totals.source IS 'Bundle identifier of the recording app or device.';
COMMENT ON COLUMN health.daily_source_totals.total IS 'This source''s total that day, in unit: sum of value (rule total) or minutes asleep, stages 1, 3, 4 and 5 (rule sleep).';
COMMENT ON COLUMN health.daily_source_totals.samples IS 'Samples of this source, type and day (sleep: every stage, in bed and awake included).';
COMMENT ON COLUMN health.daily_source_totals.rank IS '1 for the day''s winner, then 2, 3, …: a fixed priority first (listed sources before unlisted), then the largest total, then the source that sorts first in byte order (COLLATE "C").';
COMMENT ON COLUMN health.daily_source_totals.is_winner IS 'True for the one source whose total is the day''s value (rank 1).';
COMMENT ON COLUMN health.daily_source_totals.is_partial IS 'True while the day is not over in the person''s time zone (with no zone: in the UTC offset their phone wrote its latest healthd batch in; before any, until it is over everywhere, i.e. day >= the date in UTC−12). Leave partial days out of averages.';

---------------------------------------------------------------------------------------------
-- health.daily_totals
CREATE OR REPLACE VIEW health.daily_totals AS
SELECT d.person, d.day, d.type, d.metric, d.unit, d.value, d.source, d.alternatives,
       health_store.is_partial_in(d.day, st.time_zone, pr.sent_offset) AS is_partial
FROM health_store.rollup_day_type d
LEFT JOIN health_store.settings st ON st.person = d.person
LEFT JOIN health_store.persons pr ON pr.person = d.person
-- A night with no minute asleep from any source has no day value, so no row (calc_day_type).
WHERE d.per_source_winner AND d.ranked_sources IS NOT NULL;

COMMENT ON VIEW health.daily_totals IS
  'The day value of each per-source type (rules total and sleep): one source''s total, the winner, never a sum across sources; one row per person, local day and type with data. A night with no minute asleep from any source (time in bed only) has no sleep row: it is not a night of 0 minutes asleep.';
COMMENT ON COLUMN health.daily_totals.person IS 'Whose data.';
COMMENT ON COLUMN health.daily_totals.day IS 'Local date in the person''s time zone (written offsets when none is set); sleep counts on the day of waking.';
COMMENT ON COLUMN health.daily_totals.type IS 'Apple type identifier (a health.catalog type of rule total or sleep).';
COMMENT ON COLUMN health.daily_totals.metric IS 'Name of the day value, unit in the name (health.catalog.metric).';
COMMENT ON COLUMN health.daily_totals.unit IS 'Unit of value: the samples'' unit as sent (fraction stays a fraction), min for sleep.';
COMMENT ON COLUMN health.daily_totals.value IS 'The winning source''s total that day, in unit (sleep: its minutes asleep).';
COMMENT ON COLUMN health.daily_totals.source IS 'The winning source: the largest total (ties: first in byte order), unless a fixed priority is set with health.set_source_priority.';
COMMENT ON COLUMN health.daily_totals.alternatives IS 'JSON object {source: total} of the other sources that day, in unit; {} when there are none.';
COMMENT ON COLUMN health.daily_totals.is_partial IS 'True while the day is not over in the person''s time zone (with no zone: in the UTC offset their phone wrote its latest healthd batch in; before any, until it is over everywhere, i.e. day >= the date in UTC−12). Leave partial days out of averages.';

---------------------------------------------------------------------------------------------
-- health.daily_sleep
CREATE OR REPLACE VIEW health.daily_sleep AS
SELECT d.person, d.day, d.source, d.asleep_min, d.core_min, d.deep_min, d.rem_min,
       d.unspecified_min, d.awake_min, d.in_bed_min, d.unknown_min, d.alternatives,
       health_store.is_partial_in(d.day, st.time_zone, pr.sent_offset) AS is_partial
FROM health_store.rollup_day_type d
LEFT JOIN health_store.settings st ON st.person = d.person
LEFT JOIN health_store.persons pr ON pr.person = d.person
WHERE d.rule = 'sleep';

COMMENT ON VIEW health.daily_sleep IS
  'Sleep per night, counted on the local day of waking (the day a sample ends): one row per person and day with sleep samples. Every minute column is the winning source''s. A night with only time in bed (an iPhone alone records no sleep) is listed with asleep_min NULL and the time in bed measured.';
COMMENT ON COLUMN health.daily_sleep.person IS 'Whose data.';
COMMENT ON COLUMN health.daily_sleep.day IS 'Local date of waking: the date of the samples'' end in the person''s time zone (written offsets when none is set).';
COMMENT ON COLUMN health.daily_sleep.source IS 'The winning source: the most minutes asleep (ties: first in byte order), unless a fixed priority is set; a source with no minute asleep never wins over one with some. On a night with no minute asleep from any source, the source with the most time in bed.';
COMMENT ON COLUMN health.daily_sleep.asleep_min IS 'Minutes asleep: core + deep + REM + unspecified (values 1, 3, 4, 5); in bed and awake are not sleep. NULL on a night no source recorded a minute asleep (not 0: leave it out of averages).';
COMMENT ON COLUMN health.daily_sleep.core_min IS 'Minutes in core sleep (value 3, asleepCore).';
COMMENT ON COLUMN health.daily_sleep.deep_min IS 'Minutes in deep sleep (value 4, asleepDeep).';
COMMENT ON COLUMN health.daily_sleep.rem_min IS 'Minutes in REM sleep (value 5, asleepREM).';
COMMENT ON COLUMN health.daily_sleep.unspecified_min IS 'Minutes asleep with no stage (value 1, asleepUnspecified).';
COMMENT ON COLUMN health.daily_sleep.awake_min IS 'Minutes awake (value 2); not sleep.';
COMMENT ON COLUMN health.daily_sleep.in_bed_min IS 'Minutes in bed (value 0); not sleep.';
COMMENT ON COLUMN health.daily_sleep.unknown_min IS 'Minutes of values with no known stage (outside 0–5, sent without a name); counted nowhere else.';
COMMENT ON COLUMN health.daily_sleep.alternatives IS 'JSON object {source: minutes asleep} of the other sources that night; {} when there are none, and on a night with no minute asleep.';
COMMENT ON COLUMN health.daily_sleep.is_partial IS 'True while the day is not over in the person''s time zone (with no zone: in the UTC offset their phone wrote its latest healthd batch in; before any, until it is over everywhere, i.e. day >= the date in UTC−12). Leave partial days out of averages.';

---------------------------------------------------------------------------------------------
-- health.daily_readings
CREATE OR REPLACE VIEW health.daily_readings AS
SELECT d.person, d.day, d.type, d.metric, d.unit,
       d.min_value AS min, d.value AS mean, d.max_value AS max, d.n_values AS samples,
       health_store.is_partial_in(d.day, st.time_zone, pr.sent_offset) AS is_partial
FROM health_store.rollup_day_type d
LEFT JOIN health_store.settings st ON st.person = d.person
LEFT JOIN health_store.persons pr ON pr.person = d.person
-- A day whose readings have no value (sent with another kind or unit) has none.
WHERE d.rule = 'reading' AND d.n_values > 0;

COMMENT ON VIEW health.daily_readings IS
  'Readings (heart, vitals) per day: min, mean and max across every source, and the count; one row per person, local day and type with readings.';
COMMENT ON COLUMN health.daily_readings.person IS 'Whose data.';
COMMENT ON COLUMN health.daily_readings.day IS 'Local date of the readings'' start in the person''s time zone (written offsets when none is set).';
COMMENT ON COLUMN health.daily_readings.type IS 'Apple type identifier (a health.catalog type of rule reading).';
COMMENT ON COLUMN health.daily_readings.metric IS 'Name of the day value, unit in the name (health.catalog.metric).';
COMMENT ON COLUMN health.daily_readings.unit IS 'Unit of min, mean and max as sent (count/min, ms, fraction, ml/(kg*min), degC, mmHg); a fraction stays a fraction.';
COMMENT ON COLUMN health.daily_readings.min IS 'Lowest reading that day, any source, in unit.';
COMMENT ON COLUMN health.daily_readings.mean IS 'Mean of the day''s readings across sources, in unit.';
COMMENT ON COLUMN health.daily_readings.max IS 'Highest reading that day, any source, in unit.';
COMMENT ON COLUMN health.daily_readings.samples IS 'Number of readings that day, all sources.';
COMMENT ON COLUMN health.daily_readings.is_partial IS 'True while the day is not over in the person''s time zone (with no zone: in the UTC offset their phone wrote its latest healthd batch in; before any, until it is over everywhere, i.e. day >= the date in UTC−12). Leave partial days out of averages.';

---------------------------------------------------------------------------------------------
-- health.daily_body
CREATE OR REPLACE VIEW health.daily_body AS
SELECT d.person, d.day, d.type, d.metric, d.unit, d.value, d.measured_at, d.source
FROM health_store.rollup_day_type d
WHERE d.rule = 'latest' AND d.n_values > 0;

COMMENT ON VIEW health.daily_body IS
  'Body measurements per day: the latest sample of the day by start (ties: latest end, then source in byte order, then uuid), any source; one row per person, local day and type measured.';
COMMENT ON COLUMN health.daily_body.person IS 'Whose data.';
COMMENT ON COLUMN health.daily_body.day IS 'Local date of the measurement''s start in the person''s time zone (written offsets when none is set).';
COMMENT ON COLUMN health.daily_body.type IS 'Apple type identifier (a health.catalog type of rule latest).';
COMMENT ON COLUMN health.daily_body.metric IS 'Name of the day value, unit in the name (health.catalog.metric).';
COMMENT ON COLUMN health.daily_body.unit IS 'Unit of value as sent (kg, m, count, fraction); a fraction stays a fraction.';
COMMENT ON COLUMN health.daily_body.value IS 'The day''s latest measurement, in unit.';
COMMENT ON COLUMN health.daily_body.measured_at IS 'Start of that measurement (timestamptz).';
COMMENT ON COLUMN health.daily_body.source IS 'Bundle identifier of the app or device that recorded it.';

---------------------------------------------------------------------------------------------
-- health.daily_workouts
CREATE OR REPLACE VIEW health.daily_workouts AS
SELECT d.person, d.day, d.workouts, d.duration_s, d.distance_m, d.energy_kcal,
       health_store.is_partial_in(d.day, st.time_zone, pr.sent_offset) AS is_partial
FROM health_store.rollup_day_type d
LEFT JOIN health_store.settings st ON st.person = d.person
LEFT JOIN health_store.persons pr ON pr.person = d.person
-- A day whose samples of the workout type are none of them workouts (sent as another kind) has none.
WHERE d.rule = 'workout' AND d.workouts > 0;

COMMENT ON VIEW health.daily_workouts IS
  'Workouts per day: count and totals over every source (overlapping sessions are each counted; see health.workouts.overlapping); one row per person and local day with workouts.';
COMMENT ON COLUMN health.daily_workouts.person IS 'Whose data.';
COMMENT ON COLUMN health.daily_workouts.day IS 'Local date of the workouts'' start in the person''s time zone (written offsets when none is set).';
COMMENT ON COLUMN health.daily_workouts.workouts IS 'Number of workouts that day.';
COMMENT ON COLUMN health.daily_workouts.duration_s IS 'Total duration in seconds.';
COMMENT ON COLUMN health.daily_workouts.distance_m IS 'Total distance in metres over the workouts that recorded one; NULL when none did.';
COMMENT ON COLUMN health.daily_workouts.energy_kcal IS 'Total active energy in kilocalories over the workouts that recorded it; NULL when none did.';
COMMENT ON COLUMN health.daily_workouts.is_partial IS 'True while the day is not over in the person''s time zone (with no zone: in the UTC offset their phone wrote its latest healthd batch in; before any, until it is over everywhere, i.e. day >= the date in UTC−12). Leave partial days out of averages.';

---------------------------------------------------------------------------------------------
-- health.workouts
CREATE OR REPLACE VIEW health.workouts AS
SELECT w.person, w.day, w.uuid, w.start_at, w.end_at, w.activity_type,
       coalesce(w.activity_name, f.activity_name, 'activity type ' || w.activity_type) AS activity_name,
       w.duration_s, coalesce(w.distance_m, f.distance_m) AS distance_m, coalesce(w.energy_kcal, f.energy_kcal) AS energy_kcal,
       w.source,
       coalesce(o.uuids, '{}'::uuid[]) AS overlapping,
       CASE WHEN w.origin = 'healthd' AND sw.uuid IS NOT NULL THEN 'both' ELSE w.origin::text END AS origin,
       sw.server_type, sw.device_name, coalesce(sw.heart_rate_min, hr.low) AS heart_rate_min,
       coalesce(sw.heart_rate_mean, hr.mean) AS heart_rate_mean, coalesce(sw.heart_rate_max, hr.high) AS heart_rate_max,
       r.points AS route_points, r.distance_m AS route_distance_m, r.elevation_gain_m
FROM health_store.workout_samples w
-- The person's longest workout bounds the search for overlapping ones (grouped by person, so
-- that a filter on the person reaches it; on Citus: one shard).
JOIN (SELECT x.person, max(x.end_at - x.start_at) AS longest
      FROM health_store.workout_samples x GROUP BY x.person) m ON m.person = w.person
-- Each workout's overlapping ones, for the rows asked only (a filter on day reaches w first):
-- an index range from its start minus the longest workout, not every earlier workout.
LEFT JOIN LATERAL (
  SELECT array_agg(b.uuid ORDER BY b.start_at, b.uuid) AS uuids
  FROM health_store.workout_samples b
  WHERE b.person = w.person AND b.uuid <> w.uuid
    AND b.start_at < w.end_at AND b.start_at >= w.start_at - m.longest AND b.end_at > w.start_at
) o ON true
-- What a Stridee body adds to the workout (whoever sent it first), and its route.
LEFT JOIN health_store.stridee_workouts sw ON sw.person = w.person AND sw.uuid = w.uuid
LEFT JOIN health_store.workout_routes r ON r.person = w.person AND r.uuid = w.uuid
-- What a Health Auto Export copy of it brought, where it has none of its own.
LEFT JOIN health_store.workout_fills f ON f.person = w.person AND f.uuid = w.uuid
-- Without a Stridee body, the heart rate of the stream Health Auto Export sent (heartRateData).
LEFT JOIN LATERAL (
  SELECT min(x.v) AS low, avg(x.v) AS mean, max(x.v) AS high
  FROM health_store.workout_streams s CROSS JOIN LATERAL unnest(s.v) AS x(v)
  WHERE s.person = w.person AND s.uuid = w.uuid AND s.stream = 'heart_rate'
) hr ON sw.uuid IS NULL;

COMMENT ON VIEW health.workouts IS
  'Every workout, one row each, never merged: two apps recording one session show as two rows that list each other in overlapping.';
COMMENT ON COLUMN health.workouts.person IS 'Whose data.';
COMMENT ON COLUMN health.workouts.day IS 'Local date of the workout''s start in the person''s time zone (written offsets when none is set).';
COMMENT ON COLUMN health.workouts.uuid IS 'Apple Health''s identifier of the workout.';
COMMENT ON COLUMN health.workouts.start_at IS 'Start (timestamptz).';
COMMENT ON COLUMN health.workouts.end_at IS 'End (timestamptz).';
COMMENT ON COLUMN health.workouts.activity_type IS 'Apple HKWorkoutActivityType raw value.';
COMMENT ON COLUMN health.workouts.activity_name IS 'Activity name as sent (running, cycling, …); where the workout came without one, the name a Health Auto Export copy of it gave, else ''activity type N''.';
COMMENT ON COLUMN health.workouts.duration_s IS 'Duration in seconds.';
COMMENT ON COLUMN health.workouts.distance_m IS 'Distance in metres (where the workout came without one, what a Health Auto Export copy of it recorded); NULL when none was recorded.';
COMMENT ON COLUMN health.workouts.energy_kcal IS 'Active energy in kilocalories (where the workout came without it, what a Health Auto Export copy of it recorded); NULL when none was recorded.';
COMMENT ON COLUMN health.workouts.source IS 'Bundle identifier of the app or device that recorded it.';
COMMENT ON COLUMN health.workouts.overlapping IS 'uuids of the person''s other workouts whose time overlaps this one (start before its end and end after its start), ordered by start; {} when none.';
COMMENT ON COLUMN health.workouts.origin IS 'What brought the workout: healthd (the app''s sample), stridee (a healthkit.v1 body only), both (the same HKWorkout uuid from each: one workout, healthd''s values), export (the Health app''s export) or hae (Health Auto Export).';
COMMENT ON COLUMN health.workouts.server_type IS 'Stridee discipline as sent (RUNNING, CYCLING, …); NULL without a Stridee body.';
COMMENT ON COLUMN health.workouts.device_name IS 'Recording device named in the Stridee body; NULL when none.';
COMMENT ON COLUMN health.workouts.heart_rate_min IS 'Lowest heart rate of the Stridee body''s heartRate stream (else of Health Auto Export''s heartRateData), beats per minute (count/min); NULL without one.';
COMMENT ON COLUMN health.workouts.heart_rate_mean IS 'Mean of the heart rate stream''s samples (Stridee''s heartRate, else Health Auto Export''s heartRateData), beats per minute; NULL without one.';
COMMENT ON COLUMN health.workouts.heart_rate_max IS 'Highest heart rate of the heart rate stream (as heart_rate_mean), beats per minute; NULL without one.';
COMMENT ON COLUMN health.workouts.route_points IS 'GPS points of the workout''s route (health.workout_route_points); NULL without a route.';
COMMENT ON COLUMN health.workouts.route_distance_m IS 'Length of the route in metres (haversine over consecutive points, see health.workout_routes); NULL without a route.';
COMMENT ON COLUMN health.workouts.elevation_gain_m IS 'Sum of the route''s rises between consecutive points with an altitude, metres; NULL without a route or altitudes.';

---------------------------------------------------------------------------------------------
-- health.coalesced_samples
CREATE OR REPLACE VIEW health.coalesced_samples AS
SELECT c.person, s.day, c.type, c.source, c.uuid, c.start_at, c.end_at, s.value, c.parts,
       c.parts_total::double precision AS parts_total, c.counted
FROM health_store.coverings c
JOIN health_store.live_samples s ON s.person = c.person AND s.uuid = c.uuid;

COMMENT ON VIEW health.coalesced_samples IS
  'Every sample of rule total that covers two or more samples of its own source (Apple Health replacing fine samples with one combined sample, or a source writing a long sample over short ones): one row each. counted is false for a coalescing — its parts add up to its value, so it counts in no total — and true when they do not.';
COMMENT ON COLUMN health.coalesced_samples.person IS 'Whose data.';
COMMENT ON COLUMN health.coalesced_samples.day IS 'The covering sample''s own local day (of its start, in the person''s time zone or the offset written).';
COMMENT ON COLUMN health.coalesced_samples.type IS 'Apple type identifier (a health.catalog type of rule total).';
COMMENT ON COLUMN health.coalesced_samples.source IS 'Bundle identifier of the source that wrote both the covering sample and its parts.';
COMMENT ON COLUMN health.coalesced_samples.uuid IS 'The covering sample''s uuid.';
COMMENT ON COLUMN health.coalesced_samples.start_at IS 'Start of the covering sample (timestamptz).';
COMMENT ON COLUMN health.coalesced_samples.end_at IS 'End of the covering sample (timestamptz).';
COMMENT ON COLUMN health.coalesced_samples.value IS 'The covering sample''s value, in its type''s unit.';
COMMENT ON COLUMN health.coalesced_samples.parts IS 'Samples of the same person, type and source inside its span (start >= its start, end <= its end).';
COMMENT ON COLUMN health.coalesced_samples.parts_total IS 'What those samples add up to, in the type''s unit.';
COMMENT ON COLUMN health.coalesced_samples.counted IS 'False for a coalescing (parts_total equals value to 1e-9 of it): the sample counts in no total and no sample count, its parts do. True when the parts do not add up: it counts as any sample.';

---------------------------------------------------------------------------------------------
-- health.daily_summary
CREATE OR REPLACE VIEW health.daily_summary AS
SELECT d.person, d.day,
       health_store.is_partial_in(d.day, st.time_zone, pr.sent_offset) AS is_partial,
       d.steps, d.distance_m, d.flights_climbed, d.active_energy_kcal, d.basal_energy_kcal,
       d.exercise_min, d.stand_min, d.sleep_min, d.heart_rate_min, d.heart_rate_mean,
       d.heart_rate_max, d.resting_heart_rate, d.walking_heart_rate, d.hrv_sdnn_ms,
       d.oxygen_saturation_pct, d.respiratory_rate, d.vo2_max, d.body_temperature_c,
       d.blood_pressure_systolic, d.blood_pressure_diastolic, d.body_mass_kg, d.height_m,
       d.body_mass_index, d.body_fat_pct, d.lean_body_mass_kg,
       -- A sample of the workout type sent as another kind is no workout: no count of 0.
       nullif(d.workouts, 0) AS workouts, d.workout_duration_s, d.unknown_samples
FROM health_store.rollup_day d
LEFT JOIN health_store.settings st ON st.person = d.person
LEFT JOIN health_store.persons pr ON pr.person = d.person;

COMMENT ON VIEW health.daily_summary IS
  'One row per person and local day with any sample: every metric side by side. Totals are the winning source''s (never a sum of sources), readings the day''s mean, body values the day''s latest, fractions as percentages. A column is NULL when that metric had no data that day.';
COMMENT ON COLUMN health.daily_summary.person IS 'Whose data.';
COMMENT ON COLUMN health.daily_summary.day IS 'Local date in the person''s time zone (written offsets when none is set); sleep counts on the day of waking.';
COMMENT ON COLUMN health.daily_summary.is_partial IS 'True while the day is not over in the person''s time zone (with no zone: in the UTC offset their phone wrote its latest healthd batch in; before any, until it is over everywhere, i.e. day >= the date in UTC−12). Leave partial days out of averages.';
COMMENT ON COLUMN health.daily_summary.steps IS 'Steps (count): the winning source''s total.';
COMMENT ON COLUMN health.daily_summary.distance_m IS 'Walking and running distance in metres: the winning source''s total.';
COMMENT ON COLUMN health.daily_summary.flights_climbed IS 'Flights climbed (count): the winning source''s total.';
COMMENT ON COLUMN health.daily_summary.active_energy_kcal IS 'Active energy in kilocalories: the winning source''s total.';
COMMENT ON COLUMN health.daily_summary.basal_energy_kcal IS 'Basal energy in kilocalories: the winning source''s total.';
COMMENT ON COLUMN health.daily_summary.exercise_min IS 'Exercise minutes: the winning source''s total.';
COMMENT ON COLUMN health.daily_summary.stand_min IS 'Stand minutes: the winning source''s total.';
COMMENT ON COLUMN health.daily_summary.sleep_min IS 'Minutes asleep for the night ending this day: the winning source''s (stages 1, 3, 4, 5); NULL when no source recorded a minute asleep (a night with only time in bed is not 0).';
COMMENT ON COLUMN health.daily_summary.heart_rate_min IS 'Lowest heart rate reading, beats per minute (count/min), any source.';
COMMENT ON COLUMN health.daily_summary.heart_rate_mean IS 'Mean heart rate, beats per minute, across sources.';
COMMENT ON COLUMN health.daily_summary.heart_rate_max IS 'Highest heart rate reading, beats per minute, any source.';
COMMENT ON COLUMN health.daily_summary.resting_heart_rate IS 'Resting heart rate, beats per minute: the day''s mean.';
COMMENT ON COLUMN health.daily_summary.walking_heart_rate IS 'Walking heart rate average, beats per minute: the day''s mean.';
COMMENT ON COLUMN health.daily_summary.hrv_sdnn_ms IS 'Heart rate variability (SDNN) in milliseconds: the day''s mean.';
COMMENT ON COLUMN health.daily_summary.oxygen_saturation_pct IS 'Blood oxygen saturation in percent (the sent fraction × 100): the day''s mean.';
COMMENT ON COLUMN health.daily_summary.respiratory_rate IS 'Respiratory rate, breaths per minute (count/min): the day''s mean.';
COMMENT ON COLUMN health.daily_summary.vo2_max IS 'VO2 max in ml/(kg*min): the day''s mean.';
COMMENT ON COLUMN health.daily_summary.body_temperature_c IS 'Body temperature in degrees Celsius: the day''s mean.';
COMMENT ON COLUMN health.daily_summary.blood_pressure_systolic IS 'Systolic blood pressure in mmHg: the day''s mean.';
COMMENT ON COLUMN health.daily_summary.blood_pressure_diastolic IS 'Diastolic blood pressure in mmHg: the day''s mean.';
COMMENT ON COLUMN health.daily_summary.body_mass_kg IS 'Body mass in kilograms: the day''s latest measurement.';
COMMENT ON COLUMN health.daily_summary.height_m IS 'Height in metres: the day''s latest measurement.';
COMMENT ON COLUMN health.daily_summary.body_mass_index IS 'Body mass index (count, kg/m²): the day''s latest measurement.';
COMMENT ON COLUMN health.daily_summary.body_fat_pct IS 'Body fat in percent (the sent fraction × 100): the day''s latest measurement.';
COMMENT ON COLUMN health.daily_summary.lean_body_mass_kg IS 'Lean body mass in kilograms: the day''s latest measurement.';
COMMENT ON COLUMN health.daily_summary.workouts IS 'Number of workouts that day (each overlapping session counted).';
COMMENT ON COLUMN health.daily_summary.workout_duration_s IS 'Total workout duration in seconds.';
COMMENT ON COLUMN health.daily_summary.unknown_samples IS 'Samples of types not in health.catalog that day (see health.unknown_types); NULL when there were none.';

---------------------------------------------------------------------------------------------
-- health.freshness
CREATE OR REPLACE VIEW health.freshness AS
WITH f AS (
  -- When each person last sent anything (a batch or a Stridee push), the delivery that was if
  -- it was one, and their newest sample end: each noted on the person's row by the write path
  -- (health_store.note_receipt, note_newest_end; one shard on Citus).
  SELECT p.person, p.last_received_at AS received_at, d.export_id, d.basis, p.newest_end_at AS newest_sample_end_at,
         coalesce(st.stale_after, interval '6 hours') AS stale_after
  FROM health_store.persons p
  LEFT JOIN health_store.deliveries d ON d.person = p.person AND d.delivery_id = p.last_delivery_id
  LEFT JOIN health_store.settings st ON st.person = p.person
  WHERE p.last_received_at IS NOT NULL
)
SELECT f.person,
       f.received_at AS last_received_at,
       f.export_id AS last_export_id,
       f.basis AS last_basis,
       f.newest_sample_end_at,
       (extract(epoch FROM now() - f.received_at) / 3600)::double precision AS hours_since_last_batch,
       f.stale_after,
       now() - f.received_at > f.stale_after AS is_stale,
       CASE WHEN now() - f.received_at > f.stale_after THEN
         format('No batch has arrived for %s hours (stale after %s hours). Usual causes: ',
                round((extract(epoch FROM now() - f.received_at) / 3600)::numeric, 1),
                round((extract(epoch FROM f.stale_after) / 3600)::numeric, 2)::double precision)
         || 'Low Power Mode is on (it stops the scheduled export); '
         || 'the app was swiped away in the app switcher (nothing is sent until it is opened again); '
         || 'the phone is locked (Health cannot be read until it is unlocked); '
         || 'the receiver is unreachable from the phone (network, address, or the server is down); '
         || 'or the credential was rejected (a 401 is not retried: fix it, then export the missed range again).'
       END AS hint
FROM f;

COMMENT ON VIEW health.freshness IS
  'How recent the data is, per person who sent anything (a batch or a Stridee push): when the last batch or push arrived and the newest sample held. Data arrives in batches when iOS lets the app run, typically within an hour; it is never current to the second.';
COMMENT ON COLUMN health.freshness.person IS 'Whose data.';
COMMENT ON COLUMN health.freshness.last_received_at IS 'When the latest accepted batch or Stridee push arrived (timestamptz).';
COMMENT ON COLUMN health.freshness.last_export_id IS 'exportId of the export run that sent that batch; NULL when it was a Stridee push.';
COMMENT ON COLUMN health.freshness.last_basis IS 'basis of that batch: window (a manual or Shortcuts export), anchor (the scheduled export), export (an import of the Health app''s export) or hae (a Health Auto Export body); NULL when it was a Stridee push.';
COMMENT ON COLUMN health.freshness.newest_sample_end_at IS 'The latest end of any sample held for the person (timestamptz); NULL when none is held.';
COMMENT ON COLUMN health.freshness.hours_since_last_batch IS 'Hours since last_received_at, as of now().';
COMMENT ON COLUMN health.freshness.stale_after IS 'How long without a batch or push counts as stale (health.set_stale_after; 6 hours unless set).';
COMMENT ON COLUMN health.freshness.is_stale IS 'True when nothing has arrived for longer than stale_after.';
COMMENT ON COLUMN health.freshness.hint IS 'NULL unless stale; then the usual causes: Low Power Mode, the app swiped away, a locked phone, the receiver unreachable, a rejected credential.';

---------------------------------------------------------------------------------------------
-- health.export_runs
CREATE OR REPLACE VIEW health.export_runs AS
WITH first_copy AS (
  -- The first accepted copy of each batch of a run (a retried batch arrives again under the
  -- same sequence): what the batch said about itself.
  SELECT DISTINCT ON (d.person, d.export_id, d.batch_sequence)
         d.person, d.export_id, d.batch_sequence, d.samples, d.basis, d.generated_at,
         d.occasion_start, d.occasion_end
  FROM health_store.deliveries d
  ORDER BY d.person, d.export_id, d.batch_sequence, d.received_at, d.delivery_id
),
batches AS (
  -- One row per distinct batch of a run; a retried batch counts once, with the sample count
  -- of its first accepted copy.
  SELECT d.person, d.export_id, d.batch_sequence,
         min(d.received_at) AS first_received_at,
         max(d.received_at) AS last_received_at,
         min(d.delivery_id) AS first_id,
         bool_or(d.is_final) AS is_final,
         sum(d.inserted) AS inserted,
         sum(d.duplicates) AS duplicates
  FROM health_store.deliveries d
  GROUP BY d.person, d.export_id, d.batch_sequence
),
first_batch AS (
  -- The run's first batch to arrive: what the run said about itself.
  SELECT DISTINCT ON (b.person, b.export_id)
         b.person, b.export_id, f.basis, f.generated_at, f.occasion_start, f.occasion_end
  FROM batches b
  JOIN first_copy f USING (person, export_id, batch_sequence)
  ORDER BY b.person, b.export_id, b.first_received_at, b.first_id
),
runs AS (
  SELECT b.person, b.export_id,
         count(*) AS batches_received,
         max(b.batch_sequence) AS last_batch_sequence,
         max(b.batch_sequence) FILTER (WHERE b.is_final) AS final_batch_sequence,
         array_agg(b.batch_sequence) AS sequences,
         min(b.first_received_at) AS first_received_at,
         max(b.last_received_at) AS last_received_at,
         sum(f.samples)::bigint AS samples,
         sum(b.inserted)::bigint AS inserted,
         sum(b.duplicates)::bigint AS duplicates
  FROM batches b
  JOIN first_copy f USING (person, export_id, batch_sequence)
  GROUP BY b.person, b.export_id
)
SELECT r.person, r.export_id, fb.basis, fb.generated_at, fb.occasion_start, fb.occasion_end,
       r.batches_received, r.last_batch_sequence, r.final_batch_sequence,
       coalesce(r.final_batch_sequence = (SELECT count(*) FROM unnest(r.sequences) AS q(n)
                                          WHERE q.n BETWEEN 1 AND r.final_batch_sequence), false) AS is_complete,
       r.first_received_at, r.last_received_at, r.samples, r.inserted, r.duplicates
FROM runs r
JOIN first_batch fb USING (person, export_id);

COMMENT ON VIEW health.export_runs IS
  'One row per person and export run (exportId): which batches arrived and whether the run is complete. A run with no final batch yet is truncated, not invalid: its batches are stored, and a missing batch may still arrive on retry.';
COMMENT ON COLUMN health.export_runs.person IS 'Whose data.';
COMMENT ON COLUMN health.export_runs.export_id IS 'exportId shared by every batch of the run.';
COMMENT ON COLUMN health.export_runs.basis IS 'window (a manual or Shortcuts export), anchor (the scheduled export), export (an import of the Health app''s export: one run per exported file) or hae (a Health Auto Export body: one run of one batch per body).';
COMMENT ON COLUMN health.export_runs.generated_at IS 'When the run''s batches were built (timestamptz); not when any sample was recorded.';
COMMENT ON COLUMN health.export_runs.occasion_start IS 'Start of the run''s occasion (timestamptz): a label, not a filter.';
COMMENT ON COLUMN health.export_runs.occasion_end IS 'End of the run''s occasion (timestamptz).';
COMMENT ON COLUMN health.export_runs.batches_received IS 'Distinct batchSequence values received (a retried batch counts once).';
COMMENT ON COLUMN health.export_runs.last_batch_sequence IS 'Highest batchSequence received.';
COMMENT ON COLUMN health.export_runs.final_batch_sequence IS 'batchSequence of the batch marked isFinalBatch; NULL until it arrives.';
COMMENT ON COLUMN health.export_runs.is_complete IS 'True when the final batch arrived and every batch 1…final is held.';
COMMENT ON COLUMN health.export_runs.first_received_at IS 'When the run''s first batch arrived (timestamptz).';
COMMENT ON COLUMN health.export_runs.last_received_at IS 'When its latest batch arrived (timestamptz), retries included.';
COMMENT ON COLUMN health.export_runs.samples IS 'Samples sent in the run''s distinct batches (quarantined included; a retried batch counts once).';
COMMENT ON COLUMN health.export_runs.inserted IS 'Samples new to the store, summed over every accepted request of the run.';
COMMENT ON COLUMN health.export_runs.duplicates IS 'Samples already held with the same content, summed over every accepted request of the run.';

---------------------------------------------------------------------------------------------
-- health.deliveries
CREATE OR REPLACE VIEW health.deliveries AS
SELECT d.person, d.received_at, d.origin::text AS origin, d.format, d.export_id, d.batch_sequence, d.is_final,
       d.basis, d.window_start, d.window_end, d.samples, d.inserted, d.duplicates, d.replaced,
       d.quarantined, d.file
FROM health_store.deliveries d;

COMMENT ON VIEW health.deliveries IS
  'One row per accepted request, backlog file batch or batch of an imported export, retries included.';
COMMENT ON COLUMN health.deliveries.person IS 'Whose data.';
COMMENT ON COLUMN health.deliveries.received_at IS 'When the batch was accepted (timestamptz).';
COMMENT ON COLUMN health.deliveries.origin IS 'http (sent by the app), file (read from a backlog file by ingest), export (the Health app''s export, read by import-apple-health) or hae (a Health Auto Export body, sent to /hae or read by ingest).';
COMMENT ON COLUMN health.deliveries.format IS 'json or csv; xml for an export.';
COMMENT ON COLUMN health.deliveries.export_id IS 'exportId of the run the batch belongs to.';
COMMENT ON COLUMN health.deliveries.batch_sequence IS 'batchSequence: 1-based position of the batch in its run.';
COMMENT ON COLUMN health.deliveries.is_final IS 'isFinalBatch: true on the run''s last batch.';
COMMENT ON COLUMN health.deliveries.basis IS 'window (a manual or Shortcuts export) or anchor (the scheduled export); export for a batch of the Health app''s export; hae for a Health Auto Export body.';
COMMENT ON COLUMN health.deliveries.window_start IS 'windowStart (timestamptz): no sample of the batch starts before it.';
COMMENT ON COLUMN health.deliveries.window_end IS 'windowEnd (timestamptz): no sample of the batch ends after it.';
COMMENT ON COLUMN health.deliveries.samples IS 'Samples in the batch, quarantined ones included.';
COMMENT ON COLUMN health.deliveries.inserted IS 'Samples new to the store (uuid not held before).';
COMMENT ON COLUMN health.deliveries.duplicates IS 'Samples already held with the same content, and repeats of a uuid within the batch.';
COMMENT ON COLUMN health.deliveries.replaced IS 'Samples already held whose content changed: the newer copy replaced the older.';
COMMENT ON COLUMN health.deliveries.quarantined IS 'Samples that broke the contract and were kept in health.quarantine instead.';
COMMENT ON COLUMN health.deliveries.file IS 'Backlog file or export (archive, folder or export.xml) the batch was read from; NULL for a request.';

---------------------------------------------------------------------------------------------
-- health.quarantine
CREATE OR REPLACE VIEW health.quarantine AS
SELECT q.person, d.received_at, d.export_id, d.batch_sequence, q.position, q.reason, q.raw
FROM health_store.quarantine q
JOIN health_store.deliveries d ON d.person = q.person AND d.delivery_id = q.delivery_id;

COMMENT ON VIEW health.quarantine IS
  'Samples that broke the contract, kept verbatim with the reason; the rest of their batch was stored.';
COMMENT ON COLUMN health.quarantine.person IS 'Whose data.';
COMMENT ON COLUMN health.quarantine.received_at IS 'When the batch carrying the sample was accepted (timestamptz).';
COMMENT ON COLUMN health.quarantine.export_id IS 'exportId of that batch''s run.';
COMMENT ON COLUMN health.quarantine.batch_sequence IS 'batchSequence of that batch.';
COMMENT ON COLUMN health.quarantine.position IS 'Position of the sample in the batch.';
COMMENT ON COLUMN health.quarantine.reason IS 'Why the sample was not stored (a key missing or mistyped, a text over 1,024 bytes, an implausible value or date); for a record of the Health app''s export, led by its line in export.xml (line 5120: Record startDate …).';
COMMENT ON COLUMN health.quarantine.raw IS 'The sample exactly as sent (JSON object text, or the CSV row); for a record or workout of the Health app''s export, its attributes as a JSON object (quarantined once, however often the export is imported).';

---------------------------------------------------------------------------------------------
-- health.unknown_types
CREATE OR REPLACE VIEW health.unknown_types AS
SELECT d.person, d.type, min(d.kind COLLATE "C") COLLATE "default" AS kind, sum(d.samples)::bigint AS samples,
       min(d.first_start_at) AS first_start_at, max(d.last_start_at) AS last_start_at
FROM health_store.rollup_day_type d
WHERE d.rule IS NULL
GROUP BY d.person, d.type;

COMMENT ON VIEW health.unknown_types IS
  'Sample types not in health.catalog (newer than this version): kept, counted, and shown here, one row per person and type.';
COMMENT ON COLUMN health.unknown_types.person IS 'Whose data.';
COMMENT ON COLUMN health.unknown_types.type IS 'Type identifier as sent.';
COMMENT ON COLUMN health.unknown_types.kind IS 'Sample kind as sent (quantity, category, workout, or a kind not known either).';
COMMENT ON COLUMN health.unknown_types.samples IS 'Samples of this type held.';
COMMENT ON COLUMN health.unknown_types.first_start_at IS 'Earliest start of such a sample (timestamptz).';
COMMENT ON COLUMN health.unknown_types.last_start_at IS 'Latest start of such a sample (timestamptz).';

---------------------------------------------------------------------------------------------
-- health.settings
-- The people held are those `person list` lists (health_store.people): a row of
-- health_store.persons, which every writer makes (lock_person: batches, Stridee pushes, Health
-- Auto Export, settings, imports), or a token.
CREATE OR REPLACE VIEW health.settings AS
WITH persons AS (
  SELECT p.person FROM health_store.persons p
  UNION SELECT t.person FROM health_store.tokens t
)
SELECT p.person, s.time_zone, coalesce(s.stale_after, interval '6 hours') AS stale_after
FROM persons p
LEFT JOIN health_store.settings s ON s.person = p.person;

COMMENT ON VIEW health.settings IS
  'Per-person settings with defaults filled in: one row per person held (anything they sent, a setting, or a credential; as person list). Change them with health.set_time_zone and health.set_stale_after.';
COMMENT ON COLUMN health.settings.person IS 'Whose settings.';
COMMENT ON COLUMN health.settings.time_zone IS 'IANA time zone the person''s days are counted in (e.g. Europe/Berlin); NULL: each sample''s own written UTC offset decides its day.';
COMMENT ON COLUMN health.settings.stale_after IS 'How long without a batch makes health.freshness report stale; 6 hours unless set.';

---------------------------------------------------------------------------------------------
GRANT SELECT ON
  health.catalog, health.samples, health.coalesced_samples, health.daily_source_totals, health.daily_totals, health.daily_sleep,
  health.daily_readings, health.daily_body, health.daily_workouts, health.workouts,
  health.daily_summary, health.freshness, health.export_runs, health.deliveries,
  health.quarantine, health.unknown_types, health.settings
TO health_reader;
