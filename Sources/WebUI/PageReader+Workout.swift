import Postgres

/// One workout as its own page shows it.
struct WorkoutDetail: Sendable {
    var row: WorkoutRow
    var start: String
    var end: String
    var deviceName: String?
    /// The name shown for its source (`health.sources`), when it has one.
    var sourceName: String?
    var routeDistanceMeters: Double?
    var elevationGainMeters: Double?
    /// Heart rate over the workout: (seconds since its start, beats per minute), from the
    /// Stridee heartRate stream, else from the heart rate samples recorded during it.
    var heartRate: [(seconds: Double, bpm: Double)] = []
    /// Where the heart rate came from: `stream`, `samples`, or nil when there is none.
    var heartRateOrigin: String?
    /// The route's points in time order: (latitude, longitude) in degrees.
    var route: [(lat: Double, lon: Double)] = []
    /// The zone the times are written in.
    var zone: String
}

extension PageReader {
    /// The workout `uuid` of `person`, or nil when that person has no such workout (whoever
    /// else may have one).
    func workout(person: String, uuid: String) throws -> WorkoutDetail? {
        try snapshot {
            let zone = try context(person: person).timeZone ?? "UTC"
            guard let row = try connection.query("""
                SELECT uuid::text, day::text, to_char(start_at AT TIME ZONE $3, 'HH24:MI'), activity_name, duration_s,
                       distance_m, energy_kcal, source, cardinality(overlapping), origin,
                       heart_rate_min, heart_rate_mean, heart_rate_max, route_points,
                       to_char(start_at AT TIME ZONE $3, 'YYYY-MM-DD HH24:MI'), to_char(end_at AT TIME ZONE $3, 'YYYY-MM-DD HH24:MI'),
                       device_name, route_distance_m, elevation_gain_m,
                       start_at::text, end_at::text
                FROM health.workouts WHERE person = $1 AND uuid = $2::uuid
                """, [person, uuid, zone]).first, let day = LocalDay(try row.decode(1)) else { return nil }
            let summary = WorkoutRow(
                uuid: try row.decode(0), day: day, startTime: try row.decode(2), name: try row.decode(3),
                durationSeconds: try row.decodeIfPresent(4), distanceMeters: try row.decodeIfPresent(5),
                energyKcal: try row.decodeIfPresent(6), source: try row.decodeIfPresent(7) ?? "", overlapping: try row.decode(8),
                origin: try row.decodeIfPresent(9) ?? "", heartRateMin: try row.decodeIfPresent(10),
                heartRateMean: try row.decodeIfPresent(11), heartRateMax: try row.decodeIfPresent(12),
                routePoints: try row.decodeIfPresent(13))
            var detail = WorkoutDetail(row: summary, start: try row.decode(14), end: try row.decode(15),
                                       deviceName: try row.decodeIfPresent(16), routeDistanceMeters: try row.decodeIfPresent(17),
                                       elevationGainMeters: try row.decodeIfPresent(18), zone: zone)
            try readHeartRate(into: &detail, person: person, span: (try row.decode(19), try row.decode(20)))
            detail.sourceName = try sourceNames(person: person, only: summary.source)[summary.source]
            detail.route = try connection.query("""
                SELECT lat, lon FROM health.workout_route_points WHERE person = $1 AND uuid = $2::uuid ORDER BY seq
                """, [person, uuid]).map { (try $0.decode(0), try $0.decode(1)) }
            return detail
        }
    }

    private func readHeartRate(into detail: inout WorkoutDetail, person: String, span: (start: String, end: String)) throws {
        let stream = try connection.query("""
            SELECT extract(epoch FROM t - $3::timestamptz)::float8, value FROM health.workout_streams
            WHERE person = $1 AND uuid = $2::uuid AND stream = 'heart_rate' ORDER BY t
            """, [person, detail.row.uuid, span.start]).map { (try $0.decode(0, as: Double.self), try $0.decode(1, as: Double.self)) }
        if !stream.isEmpty {
            detail.heartRate = stream
            detail.heartRateOrigin = "stream"
            return
        }
        // The day (and the next, for a workout past midnight) keeps the search in the index; the span picks the readings.
        let samples = try connection.query("""
            SELECT extract(epoch FROM start_at - $3::timestamptz)::float8, value FROM health.samples
            WHERE person = $1 AND type = 'HKQuantityTypeIdentifierHeartRate' AND day BETWEEN $2::date AND $2::date + 1
              AND start_at >= $3::timestamptz AND start_at <= $4::timestamptz AND value IS NOT NULL
            ORDER BY start_at
            """, [person, detail.row.day.text, span.start, span.end]).map { (try $0.decode(0, as: Double.self), try $0.decode(1, as: Double.self)) }
        if !samples.isEmpty {
            detail.heartRate = samples
            detail.heartRateOrigin = "samples"
        }
    }
}
