/// Health app exports made to try the export reader's bounds, as the second audit made them:
/// tiny archives that hold one huge attribute, comment or GPX `<ele>`, and one route file named
/// a hundred ways. Pure: each entry's bytes come out in chunks, so whoever writes the archive
/// never holds the huge part in memory (it compresses to almost nothing).
///
/// Around the huge part stand two good records (steps at 08:00 and 10:00 on 2024-03-10), so a
/// reader that bounds it imports those two and names what it skipped.
public enum HostileExport {
    /// What is huge.
    public enum Kind: String, Sendable, CaseIterable {
        /// A Record whose `note` attribute is the huge part.
        case attribute
        /// A comment between the records.
        case comment
        /// The `<ele>` of a track point in the GPX file a workout names.
        case elevation
        /// A workout whose `FileReference`s name one GPX file of `routePoints` points a hundred
        /// ways (`/./`, `//`, `..`, letter case); the huge part is not used.
        case routeSpellings
    }

    /// Points of the route file of `routeSpellings`.
    public static let routePoints = 20_000
    /// How many ways `routeSpellings` names its route file.
    public static let spellings = 100

    /// The archive's entries, in order: the name inside the zip and a producer of its bytes
    /// (nil at the end), with `hugeBytes` bytes in the huge part.
    public static func entries(_ kind: Kind, hugeBytes: Int) -> [(name: String, next: () -> [UInt8]?)] {
        let document = chunks([.bytes(Array(head.utf8) + record(hour: 8))] + body(kind, hugeBytes: hugeBytes)
                              + [.bytes(record(hour: 10) + Array(" </HealthData>\n".utf8))])
        var out = [("apple_health_export/export.xml", document)]
        switch kind {
        case .elevation:
            out.append(("apple_health_export/workout-routes/route_1.gpx",
                        chunks([.bytes(Array((gpxHead + point(0) + "<trkpt lat=\"52.5\" lon=\"13.4\"><ele>").utf8)),
                                .filler(UInt8(ascii: "1"), hugeBytes),
                                .bytes(Array(("</ele><time>2024-03-10T09:00:30Z</time></trkpt>" + gpxTail).utf8))])))
        case .routeSpellings:
            out.append(("apple_health_export/workout-routes/route_1.gpx",
                        chunks([.bytes(Array((gpxHead + (0..<routePoints).map(point).joined() + gpxTail).utf8))])))
        case .attribute, .comment:
            break
        }
        return out
    }

    /// The third audit's export: `records` step Records (one a minute from 2024-03-01 00:00)
    /// each carrying a `note` attribute of `bytes` bytes — under the 1 MiB a token may take, so
    /// every one is read and stored, its note in its payload. A reader whose memory grows with
    /// the records it has read, rather than with what it holds at once, shows it here (800 of
    /// 1 MB took 711 MB). The archive's one entry, as `entries` gives them.
    public static func largeAttributes(records: Int, bytes: Int) -> [(name: String, next: () -> [UInt8]?)] {
        var parts: [Part] = [.bytes(Array(head.utf8))]
        for i in 0..<records {
            let time = "2024-03-\(twoDigits(1 + i / 1440)) \(twoDigits(i / 60 % 24)):\(twoDigits(i % 60)):00 +0100"
            parts.append(.bytes(Array(" <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"Phone\" unit=\"count\" startDate=\"\(time)\" endDate=\"\(time)\" value=\"\(i % 100)\" note=\"".utf8)))
            parts.append(.filler(UInt8(ascii: "a") + UInt8(i % 26), bytes))
            parts.append(.bytes(Array("\"/>\n".utf8)))
        }
        parts.append(.bytes(Array(" </HealthData>\n".utf8)))
        return [("apple_health_export/export.xml", chunks(parts))]
    }

    /// The spellings `routeSpellings` names its one route file by.
    public static var routeReferences: [String] {
        (0..<spellings).map { i in
            let name = "workout-routes/route_1.gpx"
            switch i % 4 {
            case 0: return "/" + String(repeating: "./", count: i / 4) + name
            case 1: return String(repeating: "/", count: i / 4 + 2) + name
            case 2: return "/workout-routes/" + String(repeating: "../workout-routes/", count: i / 4 + 1) + "route_1.gpx"
            default:
                // Letter case, which libzip's lookup ignores: a different pattern each time.
                let pattern = i / 4 + 1
                return "/" + String(name.enumerated().map { k, c in (pattern >> (k % 5)) & 1 == 1 ? Character(c.uppercased()) : c })
            }
        }
    }

    private static let head = """
        <?xml version="1.0" encoding="UTF-8"?>
        <HealthData locale="en_US">
         <ExportDate value="2024-03-12 10:00:00 +0100"/>

        """

    private static func record(hour: Int) -> [UInt8] {
        let time = "2024-03-10 \(hour < 10 ? "0" : "")\(hour):00:00 +0100"
        return Array(" <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"Phone\" unit=\"count\" startDate=\"\(time)\" endDate=\"\(time)\" value=\"\(hour)\"/>\n".utf8)
    }

    private static func body(_ kind: Kind, hugeBytes: Int) -> [Part] {
        switch kind {
        case .attribute:
            return [.bytes(Array(" <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"Phone\" unit=\"count\" startDate=\"2024-03-10 09:00:00 +0100\" endDate=\"2024-03-10 09:01:00 +0100\" value=\"9\" note=\"".utf8)),
                    .filler(UInt8(ascii: "a"), hugeBytes), .bytes(Array("\"/>\n".utf8))]
        case .comment:
            return [.bytes(Array(" <!--".utf8)), .filler(UInt8(ascii: "a"), hugeBytes), .bytes(Array("-->\n".utf8))]
        case .elevation, .routeSpellings:
            let references = kind == .elevation ? ["/workout-routes/route_1.gpx"] : routeReferences
            return [.bytes(Array((" <Workout workoutActivityType=\"HKWorkoutActivityTypeRunning\" duration=\"60\" durationUnit=\"min\" sourceName=\"Watch\" startDate=\"2024-03-10 09:00:00 +0100\" endDate=\"2024-03-10 10:00:00 +0100\">\n  <WorkoutRoute sourceName=\"Watch\" startDate=\"2024-03-10 09:00:00 +0100\" endDate=\"2024-03-10 10:00:00 +0100\">\n"
                            + references.map { "   <FileReference path=\"\($0)\"/>\n" }.joined() + "  </WorkoutRoute>\n </Workout>\n").utf8))]
        }
    }

    private static let gpxHead = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"Apple Health Export\"><trk><trkseg>\n"
    private static let gpxTail = "</trkseg></trk></gpx>\n"

    private static func point(_ i: Int) -> String {
        let second = i % 3600
        let time = "2024-03-10T08:\(second / 60 < 10 ? "0" : "")\(second / 60):\(second % 60 < 10 ? "0" : "")\(second % 60)Z"
        return "<trkpt lat=\"\(52.5 + Double(i) * 1e-5)\" lon=\"13.4\"><ele>40</ele><time>\(time)</time></trkpt>\n"
    }

    private static func twoDigits(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// Bytes as they are, or `count` times one byte.
    private enum Part {
        case bytes([UInt8])
        case filler(UInt8, Int)
    }

    /// A producer of the parts' bytes, at most 1 MiB a chunk.
    private static func chunks(_ parts: [Part]) -> () -> [UInt8]? {
        var index = 0
        var filled = 0
        return {
            while index < parts.count {
                switch parts[index] {
                case .bytes(let bytes):
                    index += 1
                    if !bytes.isEmpty { return bytes }
                case .filler(let byte, let count):
                    let n = min(1 << 20, count - filled)
                    if n > 0 {
                        filled += n
                        return [UInt8](repeating: byte, count: n)
                    }
                    index += 1
                    filled = 0
                }
            }
            return nil
        }
    }
}
