/// Builders for Stridee bodies in tests (`healthkit.v1`, `healthkit.wellness.v1`): members as raw
/// JSON values, in the seed's order.
public enum StrideeBody {
    public static let uuid = "5D1E8C1A-2F7B-4E0C-9A43-71C6B0F8D2E4"

    /// The seed's workout header members (no streams, no route).
    public static let workoutMembers: [(String, String)] = [
        ("format", "\"healthkit.v1\""), ("uuid", "\"\(uuid)\""), ("activityType", "37"), ("serverType", "\"RUNNING\""),
        ("sourceName", "\"Apple Watch\""), ("sourceBundleId", "\"com.apple.health\""), ("deviceName", "\"Apple Watch\""),
        ("startDate", "\"2026-10-01T06:02:11Z\""), ("endDate", "\"2026-10-01T06:48:40Z\""), ("duration", "2789.0"),
        ("totalDistanceMeters", "8412.6"), ("totalEnergyKcal", "612.0"),
    ]

    /// A workout body: the seed's header with `members` replacing, adding (at the end, in key order)
    /// or removing (nil) members.
    public static func workout(_ members: [String: String?] = [:]) -> String {
        object(workoutMembers, members)
    }

    /// One route point with `members` replacing, adding or removing members.
    public static func point(t: String = "2026-10-01T06:02:12Z", _ members: [String: String?] = [:]) -> String {
        object([("t", "\"\(t)\""), ("lat", "47.3769"), ("lon", "8.5417"), ("altitude", "408.2"), ("speed", "2.9"),
                ("course", "184.0"), ("horizontalAccuracy", "4.1"), ("verticalAccuracy", "3.0")], members)
    }

    /// One `{t, v}` sample.
    public static func sample(_ t: String, _ v: String) -> String {
        "{\"t\":\"\(t)\",\"v\":\(v)}"
    }

    /// A wellness body around item texts; `format` nil leaves the key out.
    public static func wellness(_ items: [String], format: String? = "\"healthkit.wellness.v1\"") -> String {
        var members: [String] = []
        if let format { members.append("\"format\":\(format)") }
        members.append("\"items\":[" + items.joined(separator: ",") + "]")
        return "{" + members.joined(separator: ",") + "}"
    }

    /// A wellness item of `kind` with the common fields and `members` replacing, adding or removing members.
    public static func item(_ kind: String = "daily", _ members: [String: String?] = [:]) -> String {
        object([("kind", "\"\(kind)\""), ("calendarDate", "\"2026-10-01\""), ("startTime", "\"2026-09-30T22:00:00Z\""),
                ("endTime", "\"2026-10-01T22:00:00Z\""), ("tzOffsetSeconds", "7200"), ("final", "true")], members)
    }

    private static func object(_ base: [(String, String)], _ members: [String: String?]) -> String {
        var parts: [String] = []
        for (key, value) in base {
            if let override = members[key] {
                if let override { parts.append("\"\(key)\":\(override)") }
            } else {
                parts.append("\"\(key)\":\(value)")
            }
        }
        let known = Set(base.map(\.0))
        for (key, value) in members.sorted(by: { $0.key < $1.key }) where !known.contains(key) {
            if let value { parts.append("\"\(key)\":\(value)") }
        }
        return "{" + parts.joined(separator: ",") + "}"
    }
}
