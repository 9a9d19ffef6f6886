/// Decodes one `healthkit.v1` body: one workout (docs/stridee.md).
///
/// Walks the top-level object member by member: header members are checked and copied into
/// `headerJSON`; the four streams and the route are read element by element straight into
/// columns. Where a key repeats, the last occurrence counts, as PostgreSQL's jsonb keeps it
/// (each occurrence is still checked).
struct StrideeWorkoutDecoder {
    /// The top-level keys the format defines.
    private enum Key: Int, CaseIterable {
        case format, uuid, activityType, serverType, sourceName, sourceBundleId, deviceName
        case startDate, endDate, duration, totalDistanceMeters, totalEnergyKcal
        case heartRate, runningPower, cyclingPower, cyclingCadence, route

        static let table = KeyTable(allCases.map { "\($0)" })
    }

    /// A `RawSample`'s keys.
    private enum SampleKey: Int, CaseIterable {
        case t, v
        static let table = KeyTable(allCases.map { "\($0)" })
    }

    /// A `RawLocation`'s keys.
    private enum PointKey: Int, CaseIterable {
        case t, lat, lon, altitude, speed, course, horizontalAccuracy, verticalAccuracy
        static let table = KeyTable(allCases.map { "\($0)" })
    }

    private let b: UnsafeBufferPointer<UInt8>
    private let reader: StrideeFieldReader
    private var tape: [JSONNode] = []
    private var slots: [Int] = Array(repeating: -1, count: PointKey.allCases.count)

    /// A decoder over one body's bytes; instants from `latest` on are implausible.
    init(_ bytes: UnsafeBufferPointer<UInt8>, latest: Int64) {
        b = bytes
        reader = StrideeFieldReader(b: bytes, latest: latest)
        tape.reserveCapacity(64)
    }

    /// The workout, or the first problem met in body order.
    mutating func decode() throws(StrideePayloadError) -> StrideeWorkout {
        var cursor = try StrideeDecoder.enterRootObject(b)
        var header = Header()
        var streams = [WorkoutStream](repeating: WorkoutStream(), count: 4)
        var route = WorkoutRoute()

        var isFirst = true
        while let keyNode = try cursor.nextKey(&isFirst, depth: 1, tape: &tape) {
            let key = reader.index(of: keyNode, in: Key.table).flatMap(Key.init(rawValue:))
            switch key {
            case .heartRate, .runningPower, .cyclingPower, .cyclingCadence:
                let slot = key!.rawValue - Key.heartRate.rawValue
                let range = key == .heartRate ? PlausibleRange.heartRate : Plausibility.powerAndCadence
                streams[slot] = try decodeStream("\(key!)", range, &cursor)
            case .route:
                route = try decodeRoute(&cursor)
            default:
                try decodeHeaderMember(key, keyNode, &cursor, into: &header)
            }
        }
        try cursor.finish()
        header.json.append(UInt8(ascii: "}"))
        return try header.workout(streams, route)
    }

    /// A member other than a stream or the route: checked, read into `header` when the format
    /// defines it, and copied into `header.json` whatever it is.
    private mutating func decodeHeaderMember(_ key: Key?, _ keyNode: JSONNode, _ cursor: inout JSONCursor,
                                             into header: inout Header) throws(StrideePayloadError) {
        let range = try cursor.value(depth: 1, into: &tape)
        let name = key.map { "\($0)" }
        try header.read(key, keyNode, tape[0], reader)
        // Whatever the member is, the header keeps it, so it must cast to jsonb.
        try reader.checkJSONB(tape, 0..<tape.count, name ?? StrideeDecoder.keyName(reader, keyNode))
        if header.json.count > 1 { header.json.append(UInt8(ascii: ",")) }
        header.json.append(contentsOf: UnsafeBufferPointer(rebasing: b[keyNode.start..<range.upperBound]))
    }

    /// Opens the array at the cursor; false for `null` (no samples), an error for anything else.
    private mutating func enterArray(_ name: String, _ cursor: inout JSONCursor) throws(StrideePayloadError) -> Bool {
        if cursor.enter(UInt8(ascii: "[")) { return true }
        try cursor.value(depth: 1, into: &tape)
        guard tape[0].kind == .null else { throw StrideePayloadError(path: name, "not an array") }
        return false
    }

    /// A `[{t, v}]` stream, sorted by time, its values within `range`.
    private mutating func decodeStream(_ name: String, _ range: PlausibleRange, _ cursor: inout JSONCursor) throws(StrideePayloadError) -> WorkoutStream {
        guard try enterArray(name, &cursor) else { return WorkoutStream() }
        // `{"t":"2026-10-01T06:02:12Z","v":0}`: 34 bytes at least.
        let expected = cursor.elementCount(minimumBytes: 34)
        var times: [Int64] = []
        var values: [Double] = []
        times.reserveCapacity(expected)
        values.reserveCapacity(expected)
        var sorted = true
        var index = 0
        var isFirst = true
        while try cursor.nextElement(&isFirst) {
            try cursor.value(depth: 2, into: &tape)
            guard tape[0].kind == .object else { throw StrideePayloadError(path: "\(name)[\(index)]", "not an object") }
            reader.resolve(tape, object: 0, SampleKey.table, into: &slots)
            let t = try time(slots[SampleKey.t.rawValue], "\(name)[\(index)].t")
            guard slots[SampleKey.v.rawValue] >= 0 else { throw StrideePayloadError(path: "\(name)[\(index)].v", "missing") }
            let v = try reader.double(tape[slots[SampleKey.v.rawValue]], plausible: range, "\(name)[\(index)].v")
            if let last = times.last, t < last { sorted = false }
            times.append(t)
            values.append(v)
            index += 1
        }
        guard let order = StrideeDecoder.stableOrder(times, sorted: sorted) else { return WorkoutStream(times: times, values: values) }
        return WorkoutStream(times: order.map { times[$0] }, values: order.map { values[$0] })
    }

    /// The `route`, sorted by time.
    private mutating func decodeRoute(_ cursor: inout JSONCursor) throws(StrideePayloadError) -> WorkoutRoute {
        var route = WorkoutRoute()
        guard try enterArray("route", &cursor) else { return route }
        // `{"t":"2026-10-01T06:02:12Z","lat":0,"lon":0}`: 44 bytes at least.
        route.reserveCapacity(cursor.elementCount(minimumBytes: 44))
        var sorted = true
        var index = 0
        var isFirst = true
        while try cursor.nextElement(&isFirst) {
            try cursor.value(depth: 2, into: &tape)
            guard tape[0].kind == .object else { throw StrideePayloadError(path: "route[\(index)]", "not an object") }
            reader.resolve(tape, object: 0, PointKey.table, into: &slots)
            let t = try time(slots[PointKey.t.rawValue], "route[\(index)].t")
            let lat = try required(.lat, index)
            let lon = try required(.lon, index)
            route.latitudes.append(try reader.double(lat, in: -90...90, "route[\(index)].lat"))
            route.longitudes.append(try reader.double(lon, in: -180...180, "route[\(index)].lon"))
            route.altitudes.append(try optional(.altitude, index))
            route.speeds.append(try optional(.speed, index))
            route.courses.append(try optional(.course, index))
            route.horizontalAccuracies.append(try optional(.horizontalAccuracy, index))
            route.verticalAccuracies.append(try optional(.verticalAccuracy, index))
            if let last = route.times.last, t < last { sorted = false }
            route.times.append(t)
            index += 1
        }
        if let order = StrideeDecoder.stableOrder(route.times, sorted: sorted) { route.permute(order) }
        return route
    }

    /// The required `t` of a stream sample or route point, as microseconds.
    private func time(_ slot: Int, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> Int64 {
        guard slot >= 0 else { throw StrideePayloadError(path: path(), "missing") }
        return try reader.timestamp(tape[slot], path()).microsecondsSinceEpoch
    }

    private func required(_ key: PointKey, _ index: Int) throws(StrideePayloadError) -> JSONNode {
        let slot = slots[key.rawValue]
        guard slot >= 0 else { throw StrideePayloadError(path: "route[\(index)].\(key)", "missing") }
        return tape[slot]
    }

    private func optional(_ key: PointKey, _ index: Int) throws(StrideePayloadError) -> Double? {
        let slot = slots[key.rawValue]
        return slot < 0 ? nil : try reader.optionalDouble(tape[slot], "route[\(index)].\(key)")
    }

    /// The header members read so far: the fields the workout needs, and every member as JSON.
    private struct Header {
        var uuid: String?
        var activityType: Int32?
        var serverType: StrideeServerType?
        var startDate: Timestamp?
        var endDate: Timestamp?
        var duration: Double?
        var sourceName: String?
        var sourceBundleId: String?
        var deviceName: String?
        var totalDistanceMeters: Double?
        var totalEnergyKcal: Double?
        /// The members as a JSON object (closed by `decode` at the body's end).
        var json: [UInt8] = [UInt8(ascii: "{")]

        /// Checks the value of a member and keeps it in its field; of a key the format does not
        /// define, only the escapes are checked.
        mutating func read(_ key: Key?, _ keyNode: JSONNode, _ value: JSONNode, _ reader: StrideeFieldReader) throws(StrideePayloadError) {
            switch key {
            case .format:
                try StrideeDecoder.checkFormat(reader, value, "healthkit.v1")
            case .uuid:
                let text = try reader.string(value, "uuid")
                guard UUIDText.isValid(text) else { throw StrideePayloadError(path: "uuid", "\"\(PayloadDecoder.snippet(text))\" is not a UUID") }
                uuid = text.uppercased()
            case .activityType:
                activityType = try reader.int32(value, "activityType")
            case .serverType:
                let text = try reader.string(value, "serverType")
                guard let found = StrideeServerType(rawValue: text) else {
                    let known = StrideeServerType.allCases.map(\.rawValue).joined(separator: ", ")
                    throw StrideePayloadError(path: "serverType", "`\(PayloadDecoder.snippet(text))` is not one of \(known)")
                }
                serverType = found
            case .startDate:
                startDate = try reader.timestamp(value, "startDate")
            case .endDate:
                endDate = try reader.timestamp(value, "endDate")
            case .duration:
                duration = try reader.nonNegative(value, "duration")
            case .sourceName:
                sourceName = try reader.optionalString(value, "sourceName")
            case .sourceBundleId:
                sourceBundleId = try reader.optionalString(value, "sourceBundleId")
            case .deviceName:
                deviceName = try reader.optionalString(value, "deviceName")
            case .totalDistanceMeters:
                totalDistanceMeters = try reader.optionalDouble(value, plausible: Plausibility.workoutTotals, "totalDistanceMeters")
            case .totalEnergyKcal:
                totalEnergyKcal = try reader.optionalDouble(value, plausible: Plausibility.workoutTotals, "totalEnergyKcal")
            case nil:
                try reader.checkEscapes(keyNode, StrideeDecoder.keyName(reader, keyNode))
            case .heartRate, .runningPower, .cyclingPower, .cyclingCadence, .route:
                break
            }
        }

        /// The workout once the body has ended: the required fields present, the end not before
        /// the start.
        func workout(_ streams: [WorkoutStream], _ route: WorkoutRoute) throws(StrideePayloadError) -> StrideeWorkout {
            guard let uuid else { throw StrideePayloadError(path: "uuid", "missing") }
            guard let activityType else { throw StrideePayloadError(path: "activityType", "missing") }
            guard let serverType else { throw StrideePayloadError(path: "serverType", "missing") }
            guard let startDate else { throw StrideePayloadError(path: "startDate", "missing") }
            guard let endDate else { throw StrideePayloadError(path: "endDate", "missing") }
            guard let duration else { throw StrideePayloadError(path: "duration", "missing") }
            guard endDate.microsecondsSinceEpoch >= startDate.microsecondsSinceEpoch else {
                throw StrideePayloadError(path: "endDate", "\(endDate) is before startDate \(startDate)")
            }
            return StrideeWorkout(
                uuid: uuid, activityType: activityType, serverType: serverType, startDate: startDate, endDate: endDate,
                duration: duration, sourceName: sourceName, sourceBundleId: sourceBundleId, deviceName: deviceName,
                totalDistanceMeters: totalDistanceMeters, totalEnergyKcal: totalEnergyKcal,
                heartRate: streams[0], runningPower: streams[1], cyclingPower: streams[2], cyclingCadence: streams[3],
                route: route, headerJSON: String(decoding: json, as: UTF8.self))
        }
    }
}
