/// A workout's series and route, read point by point off the cursor (a long ride's route is
/// large: never one tape). A point that breaks the contract sets the workout's problem (it is
/// then quarantined whole, as a Stridee body would be refused); the walk goes on to check the
/// body's syntax to its end.
extension HAEWalker {
    /// The members of a route point: version 2 writes `latitude`/`longitude`, version 1 `lat`/`lon`.
    enum RouteKey: Int, CaseIterable {
        case latitude, longitude, lat, lon, altitude, speed, course, horizontalAccuracy, verticalAccuracy, timestamp
        static let table = KeyTable(allCases.map { "\($0)" })
    }

    /// Opens the array at the cursor; false for `null` or anything else (then a problem).
    mutating func enterSeries(_ cursor: inout JSONCursor, _ path: String, _ problem: inout StrideePayloadError?) throws(StrideePayloadError) -> Bool {
        if cursor.enter(UInt8(ascii: "[")) { return true }
        try cursor.value(depth: 3, into: &tape)
        if tape[0].kind != .null, problem == nil { problem = StrideePayloadError(path: path, "not an array") }
        return false
    }

    /// `[{date, qty}]` (heart rate: `Avg`, else `qty`) → a stream sorted by time, its values in `range`.
    mutating func series(_ cursor: inout JSONCursor, _ path: String, _ range: PlausibleRange,
                         into problem: inout StrideePayloadError?) throws(StrideePayloadError) -> WorkoutStream {
        guard try enterSeries(&cursor, path, &problem) else { return WorkoutStream() }
        var times: [Int64] = [], values: [Double] = []
        var index = 0, first = true, sorted = true
        while try cursor.nextElement(&first) {
            try cursor.value(depth: 5, into: &tape)
            let at = "\(path)[\(index)]"
            index += 1
            guard problem == nil else { continue }
            do throws(StrideePayloadError) {
                guard tape[0].kind == .object else { throw StrideePayloadError(path: at, "not an object") }
                reader.resolve(tape, object: 0, PointKey.table, into: &slots)
                let (t, _) = try instant(.date, at)
                let key: PointKey = slots[PointKey.Avg.rawValue] >= 0 ? .Avg : .qty
                let v = try number(key, at, required: true)!
                guard range.contains(v) else {
                    throw StrideePayloadError(path: "\(at).\(key)", "\(reader.literal(tape[slots[key.rawValue]])) is outside its plausible range: \(range)")
                }
                if let last = times.last, t.microsecondsSinceEpoch < last { sorted = false }
                times.append(t.microsecondsSinceEpoch)
                values.append(v)
            } catch {
                problem = error
            }
        }
        guard let order = StrideeDecoder.stableOrder(times, sorted: sorted) else { return WorkoutStream(times: times, values: values) }
        return WorkoutStream(times: order.map { times[$0] }, values: order.map { values[$0] })
    }

    /// `route` → the workout's route sorted by time, latitudes in [−90, 90], longitudes in [−180, 180].
    mutating func route(_ cursor: inout JSONCursor, _ path: String, into problem: inout StrideePayloadError?) throws(StrideePayloadError) -> WorkoutRoute {
        var route = WorkoutRoute()
        guard try enterSeries(&cursor, path, &problem) else { return route }
        var index = 0, first = true
        while try cursor.nextElement(&first) {
            try cursor.value(depth: 5, into: &tape)
            let at = "\(path)[\(index)]"
            index += 1
            guard problem == nil else { continue }
            do throws(StrideePayloadError) {
                guard tape[0].kind == .object else { throw StrideePayloadError(path: at, "not an object") }
                reader.resolve(tape, object: 0, RouteKey.table, into: &slots)
                try routePoint(at, into: &route)
            } catch {
                problem = error
            }
        }
        route.sortByTime()
        return route
    }

    /// One route point (resolved into `slots` by `RouteKey`) appended to `route`.
    func routePoint(_ path: String, into route: inout WorkoutRoute) throws(StrideePayloadError) {
        func node(_ key: RouteKey) -> JSONNode? { slots[key.rawValue] >= 0 ? tape[slots[key.rawValue]] : nil }
        func coordinate(_ keys: [RouteKey], _ range: ClosedRange<Double>) throws(StrideePayloadError) -> Double {
            guard let key = keys.first(where: { node($0) != nil }) else { throw StrideePayloadError(path: "\(path).\(keys[0])", "missing") }
            return try reader.double(node(key)!, in: range, "\(path).\(key)")
        }
        guard let time = node(.timestamp), time.kind == .string else { throw StrideePayloadError(path: path + ".timestamp", "missing") }
        let text = Array(UnsafeBufferPointer(rebasing: b[time.contentRange]))
        guard let t = text.withUnsafeBufferPointer({ Timestamp(written: $0) ?? Timestamp(iso8601UTF8: $0) }) else {
            throw StrideePayloadError(path: path + ".timestamp", "\(reader.literal(time)) is not a date like 2024-02-06 07:00:00 -0800")
        }
        if let reason = Plausibility.instantReason(microseconds: t.microsecondsSinceEpoch, latest: reader.latest) {
            throw StrideePayloadError(path: path + ".timestamp", "\(reader.literal(time)) \(reason)")
        }
        let latitude = try coordinate([.latitude, .lat], -90...90)
        let longitude = try coordinate([.longitude, .lon], -180...180)
        var optional: [Double?] = []
        for key in [RouteKey.altitude, .speed, .course, .horizontalAccuracy, .verticalAccuracy] {
            optional.append(try reader.optionalDouble(node(key), "\(path).\(key)"))
        }
        route.times.append(t.microsecondsSinceEpoch)
        route.latitudes.append(latitude)
        route.longitudes.append(longitude)
        route.altitudes.append(optional[0])
        route.speeds.append(optional[1])
        route.courses.append(optional[2])
        route.horizontalAccuracies.append(optional[3])
        route.verticalAccuracies.append(optional[4])
    }
}
