import Civil
import Foundation

/// Generated Stridee bodies (`healthkit.v1`, `healthkit.wellness.v1`) for tests and benchmarks:
/// seeded, so the same bytes on every run.
public enum StrideeBodies {
    /// The workout's UUID in `ride(…)`.
    public static let rideUUID = "5D1E8C1A-2F7B-4E0C-9A43-71C6B0F8D2E4"
    /// The first route point's and heart-rate sample's instant in `ride(…)`: 2026-10-01T06:00:00Z.
    public static let rideStartMicros: Int64 = 1_790_834_400 * 1_000_000

    /// A cycling workout of `seconds`, one route point and one heart-rate sample per second
    /// (a six-hour ride: 21,600 of each, ~5 MB), and a power and cadence sample every
    /// `powerEvery` seconds. Route points are written with `Z`, stream samples with `+02:00`
    /// and milliseconds, numbers as Swift prints a `Double` (up to 17 digits), as JSONEncoder does.
    public static func ride(seconds: Int = 6 * 3600, powerEvery: Int = 0, seed: UInt64 = 42) -> [UInt8] {
        var random = SeededRandom(seed: seed)
        var out: [UInt8] = []
        out.reserveCapacity(seconds * 240 + 1024)
        let startSeconds = rideStartMicros / 1_000_000
        let end = stampZ(startSeconds + Int64(seconds))
        out += Array(("{\"format\":\"healthkit.v1\",\"uuid\":\"\(rideUUID)\",\"activityType\":13,\"serverType\":\"CYCLING\","
            + "\"sourceName\":\"Apple Watch\",\"sourceBundleId\":\"com.apple.health.7B3C0E5A\",\"deviceName\":\"Apple Watch\","
            + "\"startDate\":\"\(stampZ(startSeconds))\",\"endDate\":\"\(end)\",\"duration\":\(Double(seconds)),"
            + "\"totalDistanceMeters\":\(Double(seconds) * 7.9),\"totalEnergyKcal\":\(Double(seconds) / 6),\"heartRate\":[").utf8)
        var bpm = 110.0
        for s in 0..<seconds {
            bpm = min(185, max(90, bpm + random.double(-1.5...1.5)))
            if s > 0 { out.append(UInt8(ascii: ",")) }
            out += Array("{\"t\":\"\(stampOffset(startSeconds + Int64(s), millis: s % 1000))\",\"v\":\(bpm.rounded())}".utf8)
        }
        out += Array("],\"runningPower\":[],\"cyclingPower\":[".utf8)
        if powerEvery > 0 {
            for s in stride(from: 0, to: seconds, by: powerEvery) {
                if s > 0 { out.append(UInt8(ascii: ",")) }
                out += Array("{\"t\":\"\(stampZ(startSeconds + Int64(s)))\",\"v\":\(random.double(120...320).rounded())}".utf8)
            }
        }
        out += Array("],\"cyclingCadence\":[".utf8)
        if powerEvery > 0 {
            for s in stride(from: 0, to: seconds, by: powerEvery) {
                if s > 0 { out.append(UInt8(ascii: ",")) }
                out += Array("{\"t\":\"\(stampZ(startSeconds + Int64(s)))\",\"v\":\(random.double(70...100).rounded())}".utf8)
            }
        }
        out += Array("],\"route\":[".utf8)
        var lat = 47.3769
        var lon = 8.5417
        var altitude = 408.2
        var course = 184.0
        for s in 0..<seconds {
            let speed = random.double(5...11)
            course = (course + random.double(-4...4) + 360).truncatingRemainder(dividingBy: 360)
            let radians = course * .pi / 180
            lat += speed * cos(radians) / 111_195
            lon += speed * sin(radians) / (111_195 * cos(lat * .pi / 180))
            altitude += random.double(-0.6...0.6)
            if s > 0 { out.append(UInt8(ascii: ",")) }
            out += Array("""
                {"t":"\(stampZ(startSeconds + Int64(s)))","lat":\(lat),"lon":\(lon),"altitude":\(altitude),\
                "speed":\(speed),"course":\(course),"horizontalAccuracy":\(random.double(3...8)),\
                "verticalAccuracy":\(random.double(2...6))}
                """.utf8)
        }
        out += Array("]}".utf8)
        return out
    }

    /// The workout that costs the receiver most memory for its size: a route of bare points
    /// (`t`, `lat`, `lon`, one a second from 2026-10-01T06:00:00Z), as many as fit in `bytes`
    /// (about 44 bytes a point: a 30 MiB body holds ~700,000), padded with spaces to exactly
    /// `bytes`. The audit's 31.4 MB workout held 651,545 such points.
    public static func denseRoute(bytes: Int, uuid: String = rideUUID) -> [UInt8] {
        let startSeconds = rideStartMicros / 1_000_000
        let header = "{\"format\":\"healthkit.v1\",\"uuid\":\"\(uuid)\",\"activityType\":37,\"serverType\":\"RUNNING\","
            + "\"sourceName\":\"Apple Watch\",\"startDate\":\"\(stampZ(startSeconds))\",\"endDate\":\"\(stampZ(startSeconds + 3600))\","
            + "\"duration\":3600,\"route\":["
        var out = Array(header.utf8)
        out.reserveCapacity(bytes)
        var s: Int64 = 0
        while true {
            let point = Array("{\"t\":\"\(stampZ(startSeconds + s))\",\"lat\":\(s % 90),\"lon\":\(s % 180)}".utf8)
            guard out.count + point.count + 3 <= bytes else { break }
            if s > 0 { out.append(UInt8(ascii: ",")) }
            out += point
            s += 1
        }
        out += Array("]}".utf8)
        out += [UInt8](repeating: 0x20, count: max(0, bytes - out.count))
        return out
    }

    /// A wellness body of `count` items over consecutive days from `firstDay` (seconds since the
    /// epoch of a UTC midnight; 2026-01-01 by default), cycling through the nine kinds (a day's
    /// sleep with five stages, HRV and pulse-ox with 24 samples).
    public static func wellness(count: Int = 2000, seed: UInt64 = 7, firstDay: Int64 = 1_767_225_600) -> [UInt8] {
        var random = SeededRandom(seed: seed)
        let kinds = ["daily", "sleep", "hrv", "fitness", "respiration", "pulse_ox", "body_composition", "blood_pressure", "skin_temperature"]
        var items: [String] = []
        items.reserveCapacity(count)
        for index in 0..<count {
            let kind = kinds[index % kinds.count]
            let day = firstDay + Int64(index / kinds.count) * 86_400
            let date = String(stampZ(day).prefix(10))
            var item = "{\"kind\":\"\(kind)\",\"calendarDate\":\"\(date)\",\"startTime\":\"\(stampZ(day - 3600))\","
            item += "\"endTime\":\"\(stampZ(day + 82_800))\",\"tzOffsetSeconds\":3600,\"final\":true"
            func samples(_ range: ClosedRange<Double>) -> String {
                (0..<24).map { h in "{\"t\":\"\(stampZ(day + Int64(h) * 3600))\",\"v\":\(random.double(range))}" }
                    .joined(separator: ",")
            }
            switch kind {
            case "daily":
                item += ",\"steps\":\(random.int(2000...16000)),\"distanceMeters\":\(random.double(1000...12000))"
                item += ",\"activeKilocalories\":512.5,\"basalKilocalories\":1650,\"flightsClimbed\":7,\"exerciseMinutes\":34"
                item += ",\"restingHeartRate\":52,\"avgHeartRate\":71,\"minHeartRate\":48,\"maxHeartRate\":162"
            case "sleep":
                let names = ["core", "deep", "core", "rem", "awake"]
                let stages = names.enumerated().map { k, name in
                    "{\"stage\":\"\(name)\",\"start\":\"\(stampZ(day + Int64(k) * 3600))\",\"end\":\"\(stampZ(day + Int64(k + 1) * 3600))\"}"
                }
                item += ",\"stages\":[" + stages.joined(separator: ",") + "]"
            case "hrv": item += ",\"samples\":[" + samples(20...90) + "]"
            case "respiration": item += ",\"samples\":[" + samples(11...18) + "]"
            case "pulse_ox": item += ",\"samples\":[" + samples(92...100) + "]"
            case "fitness": item += ",\"vo2Max\":\(random.double(38...52))"
            case "body_composition": item += ",\"weightKg\":72.4,\"bodyFatPercent\":18.2,\"bodyMassIndex\":22.9"
            case "blood_pressure": item += ",\"systolic\":118,\"diastolic\":76"
            default: item += ",\"celsius\":\(random.double(33...35))"
            }
            items.append(item + "}")
        }
        return Array(("{\"format\":\"healthkit.wellness.v1\",\"items\":[" + items.joined(separator: ",") + "]}").utf8)
    }

    /// `2026-10-01T06:00:00Z` for seconds since the epoch.
    public static func stampZ(_ seconds: Int64) -> String {
        civil(seconds) + "Z"
    }

    /// The same instant written in `+02:00` with milliseconds: `2026-10-01T08:00:00.123+02:00`.
    static func stampOffset(_ seconds: Int64, millis: Int) -> String {
        let m = String(millis)
        return civil(seconds + 7200) + "." + String(repeating: "0", count: 3 - m.count) + m + "+02:00"
    }

    /// `YYYY-MM-DDTHH:MM:SS` of seconds since the epoch, in UTC.
    private static func civil(_ seconds: Int64) -> String {
        let date = CivilDate(daysSinceEpoch: Int(CivilDate.floorDivide(seconds, 86_400)))
        let secondOfDay = Int(seconds - Int64(date.daysSinceEpoch) * 86_400)
        return "\(date)T" + CivilDate.digits(secondOfDay / 3600, 2) + ":" + CivilDate.digits(secondOfDay / 60 % 60, 2) + ":"
            + CivilDate.digits(secondOfDay % 60, 2)
    }
}
