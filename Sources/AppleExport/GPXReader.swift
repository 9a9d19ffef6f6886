import Foundation
import HealthPayload

/// A workout route file of the export (`workout-routes/route_….gpx`): GPX 1.1 track points
/// with `ele`, `time` and Apple's extensions `speed`, `course`, `hAcc`, `vAcc`, read into the
/// columns `store_route` takes, sorted by time. Memory is bounded: a field's text beyond
/// `maxFieldBytes` makes the file unreadable, and reading stops at `maxPoints`.
final class GPXReader: XMLEventHandler {
    /// The longest text of one field read (a number or a time is a few dozen bytes).
    static let maxFieldBytes = 256

    private let maxPoints: Int
    private var route = WorkoutRoute()
    private var point: (lat: Double, lon: Double)?
    private var field: Field?
    /// The line of the field being read.
    private var fieldLine = 0
    /// Per open element: what its end means.
    private var open: [Node] = []

    private enum Node { case point, field(Field), other }
    private var text: [UInt8] = []
    private var values: [Field: Double] = [:]
    private var time: Int64?
    /// The first problem found (the file is then skipped).
    private var problem: String?

    private init(maxPoints: Int) {
        self.maxPoints = maxPoints
    }

    private enum Field { case ele, time, speed, course, hAcc, vAcc }

    /// The route in `stream` (at most `maxPoints` points), or why it cannot be read.
    static func read(_ stream: ByteStream, name: String, maxPoints: Int,
                     chunkSize: Int = 256 << 10) throws(AppleExportError) -> Result<WorkoutRoute, MappingFailure> {
        let reader = GPXReader(maxPoints: maxPoints)
        let parser = XMLStreamParser(handler: reader, text: true, name: name)
        try stream.forEachChunk(size: chunkSize) { chunk in
            parser.feed(chunk)
            return reader.problem == nil
        }
        if reader.problem == nil { parser.finish() }
        if let problem = reader.problem { return .failure(MappingFailure(problem)) }
        reader.route.sortByTime()
        return .success(reader.route)
    }

    private func note(_ problem: String) {
        if self.problem == nil { self.problem = problem }
    }

    func startElement(_ e: XMLStartElement) {
        if e.isNamed("trkpt") || e.isNamed("rtept") {
            guard let lat = e.value("lat").flatMap(ExportNumber.parse), abs(lat) <= 90,
                  let lon = e.value("lon").flatMap(ExportNumber.parse), abs(lon) <= 180 else {
                note("line \(e.line): a track point without a readable lat or lon")
                open.append(.other)
                return
            }
            point = (lat, lon)
            values = [:]
            time = nil
            open.append(.point)
            return
        }
        let f: Field? = point == nil ? nil : e.isNamed("ele") ? .ele : e.isNamed("time") ? .time : e.isNamed("speed") ? .speed
            : e.isNamed("course") ? .course : e.isNamed("hAcc") ? .hAcc : e.isNamed("vAcc") ? .vAcc : nil
        if let f {
            field = f
            fieldLine = e.line
            text.removeAll(keepingCapacity: true)
            open.append(.field(f))
        } else {
            open.append(.other)
        }
    }

    func endElement() {
        switch open.popLast() {
        case .field(let f):
            let value = String(decoding: text.drop { $0 <= 0x20 }.reversed().drop { $0 <= 0x20 }.reversed(), as: UTF8.self)
            if f == .time {
                time = ExportTimestamp(value)?.milliseconds
            } else if let v = ExportNumber.parse(value), abs(v) <= 1e15 {
                values[f] = v
            }
            field = nil
        case .point:
            endPoint()
        case .other, nil:
            break
        }
    }

    private func endPoint() {
        guard let p = point else { return }
        point = nil
        guard let time else {
            note("a track point without a readable time")
            return
        }
        guard route.count < maxPoints else {
            note("more than \(maxPoints) route points for one workout")
            return
        }
        func nonNegative(_ f: Field) -> Double? { values[f].flatMap { $0 < 0 ? nil : $0 } }
        route.times.append(time * 1000)
        route.latitudes.append(p.lat)
        route.longitudes.append(p.lon)
        route.altitudes.append(values[.ele])
        route.speeds.append(nonNegative(.speed))
        route.courses.append(nonNegative(.course))
        route.horizontalAccuracies.append(nonNegative(.hAcc))
        route.verticalAccuracies.append(nonNegative(.vAcc))
    }

    func characters(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard field != nil else { return }
        guard text.count + bytes.count <= Self.maxFieldBytes else {
            note("line \(fieldLine): a field of more than \(Self.maxFieldBytes) bytes")
            return
        }
        text.append(contentsOf: bytes)
    }

    func brokenElement(name: String, line: Int, reason: String) {
        note("line \(line): \(reason)")
    }

    func restarted(line: Int) {
        note("line \(line): unreadable")
    }

    func problem(line: Int, reason: String, inElement: Bool) {
        note("line \(line): \(reason)")
    }
}
