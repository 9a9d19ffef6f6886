import DemoData
import Foundation
import HealthPayload
import Postgres
import Testing
import TestSupport

/// Catalog types used by the view tests, with their group and unit as healthd sends them.
enum HK {
    static let steps = "HKQuantityTypeIdentifierStepCount"
    static let distance = "HKQuantityTypeIdentifierDistanceWalkingRunning"
    static let activeEnergy = "HKQuantityTypeIdentifierActiveEnergyBurned"
    static let heartRate = "HKQuantityTypeIdentifierHeartRate"
    static let restingHeartRate = "HKQuantityTypeIdentifierRestingHeartRate"
    static let oxygen = "HKQuantityTypeIdentifierOxygenSaturation"
    static let bodyMass = "HKQuantityTypeIdentifierBodyMass"
    static let bodyFat = "HKQuantityTypeIdentifierBodyFatPercentage"
    static let sleep = "HKCategoryTypeIdentifierSleepAnalysis"
    static let workout = "HKWorkoutTypeIdentifier"

    /// (group, unit) of the quantity types above.
    static let quantity: [String: (group: String, unit: String)] = [
        steps: ("activity", "count"),
        distance: ("activity", "m"),
        activeEnergy: ("activity", "kcal"),
        heartRate: ("heart", "count/min"),
        restingHeartRate: ("heart", "count/min"),
        oxygen: ("vitals", "fraction"),
        bodyMass: ("body", "kg"),
        bodyFat: ("body", "fraction"),
    ]
}

/// Sample objects exactly as healthd sends them (JSON payload, version 1), as JSON text,
/// written by DemoData (`DemoEncoder.object`), each in the offset its `start` is written in.
enum Sample {
    /// A deterministic upper-case UUID: `U(7)` is `00000000-0000-4000-8000-000000000007`.
    static func U(_ n: Int) -> String {
        let hex = String(n, radix: 16, uppercase: true)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex
    }

    static func quantity(_ uuid: String, _ type: String, source: String, start: String, end: String? = nil,
                         value: Double, unit: String? = nil, group: String? = nil) -> String {
        let known = HK.quantity[type]
        return object(uuid, DemoType(identifier: type, group: group ?? known?.group ?? "activity", kind: "quantity",
                                     unit: unit ?? known?.unit ?? "count"),
                      source: source, start: start, end: end ?? start, value: number(value))
    }

    /// A sleep analysis sample; `name` defaults to the reference's name for 0…5 and is absent otherwise.
    static func sleep(_ uuid: String, source: String, start: String, end: String, value: Int, name: String?? = nil) -> String {
        let names = ["inBed", "asleepUnspecified", "awake", "asleepCore", "asleepDeep", "asleepREM"]
        let stage: String? = name ?? (value >= 0 && value < names.count ? names[value] : nil)
        return object(uuid, .sleep, source: source, start: start, end: end, value: String(value), name: stage)
    }

    static func workout(_ uuid: String, source: String, start: String, end: String, activityType: Int,
                        activityName: String?, duration: Double, distance: Double? = nil, energy: Double? = nil) -> String {
        object(uuid, .workout, source: source, start: start, end: end, activityType: activityType, activityName: activityName,
               durationSeconds: number(duration), distanceMeters: distance.map(number), activeEnergyKilocalories: energy.map(number))
    }

    /// A JSON array of sample objects.
    static func array(_ samples: [String]) -> String { "[" + samples.joined(separator: ",") + "]" }

    /// Numbers as healthd writes them: no decimal point on a whole number.
    static func number(_ v: Double) -> String {
        if v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
        return "\(v)"
    }

    static func fingerprint(_ uuid: String) -> String {
        let base = uuid.replacingOccurrences(of: "-", with: "").lowercased()
        return String((base + base).prefix(64))
    }

    private static func object(_ uuid: String, _ type: DemoType, source: String, start: String, end: String, value: String? = nil,
                               name: String? = nil, activityType: Int? = nil, activityName: String? = nil, durationSeconds: String? = nil,
                               distanceMeters: String? = nil, activeEnergyKilocalories: String? = nil) -> String {
        let from = Bodies.instant(start), to = Bodies.instant(end)
        return DemoEncoder.object(DemoSample(uuid: uuid, type: type, source: source, start: from.millisecondsSinceEpoch, end: to.millisecondsSinceEpoch,
                                             value: value, name: name, activityType: activityType, activityName: activityName,
                                             durationSeconds: durationSeconds, distanceMeters: distanceMeters,
                                             activeEnergyKilocalories: activeEnergyKilocalories, id: fingerprint(uuid),
                                             offsetMinutes: from.offsetMinutes))
    }
}

/// What store_batch answered.
struct StoreCounts: Equatable {
    var samples: Int, inserted: Int, duplicates: Int, replaced: Int, quarantined: Int
}

/// Calls health_store.store_batch the way the write path does.
struct Store {
    let connection: PostgresConnection

    @discardableResult
    func batch(person: String = "p", _ samples: [String], exportId: String = UUID().uuidString,
               sequence: Int = 1, isFinal: Bool = true, basis: String = "window",
               receivedAt: String? = nil, quarantine: String = "[]", deferRollups: Bool = false,
               generatedAt: String = "2026-04-01T12:00:00.000+02:00") throws -> StoreCounts {
        let envelope = Envelope(exportId: exportId, generatedAt: generatedAt, batchSequence: sequence,
                                isFinalBatch: isFinal, basis: basis, windowStart: "2026-01-01T00:00:00.000Z",
                                windowEnd: "2026-12-31T00:00:00.000Z", occasionStart: "2026-03-01T00:00:00.000+01:00",
                                occasionEnd: "2026-04-01T12:00:00.000+02:00").jsonText
        let body = Sample.array(samples)
        // A schema from before the credential check in store_batch (an upgrade test's) has no
        // p_credential, and one from before the write path's stages no p_defer.
        let schema = try #require(try connection.query("""
            SELECT to_regprocedure('health_store.hold_person(text, boolean)') IS NOT NULL,
                   to_regtype('health_store.delivery_origin') IS NOT NULL
            """).first)
        let credential: Bool = try schema.decode(0), stages: Bool = try schema.decode(1)
        let rows = try connection.query("""
            SELECT * FROM health_store.store_batch($1, 'http', \(credential ? "false, " : "")'json', NULL, $2::jsonb, $3::jsonb, $4::jsonb,
                                                   sha256(convert_to($3::text, 'UTF8')), coalesce($5::timestamptz, clock_timestamp())\(stages ? ", \(deferRollups)" : ""))
            """, [person, envelope, body, quarantine, receivedAt])
        let row = try #require(rows.first)
        return StoreCounts(samples: try row.decode(0), inserted: try row.decode(1), duplicates: try row.decode(2),
                           replaced: try row.decode(3), quarantined: try row.decode(4))
    }
}

/// A result as text cells keyed by column name, for value checks.
struct Table {
    let columns: [String]
    let rows: [[String?]]

    init(_ rows: PostgresRows) {
        columns = rows.columns
        self.rows = rows.map { row in (0..<rows.columns.count).map { row[$0] } }
    }

    var count: Int { rows.count }

    /// The rows whose `column` has this text.
    func rows(where column: String, is value: String) -> [[String: String?]] {
        guard let i = columns.firstIndex(of: column) else { return [] }
        return rows.filter { $0[i] == value }.map(dictionary)
    }

    /// The one row whose `column` has this text; records an issue unless exactly one.
    func row(where column: String, is value: String, sourceLocation: SourceLocation = #_sourceLocation) -> [String: String?] {
        let found = rows(where: column, is: value)
        #expect(found.count == 1, "expected one row with \(column) = \(value), got \(found.count)", sourceLocation: sourceLocation)
        return found.first ?? [:]
    }

    func dictionary(_ row: [String?]) -> [String: String?] {
        Dictionary(uniqueKeysWithValues: zip(columns, row))
    }

    var dictionaries: [[String: String?]] { rows.map(dictionary) }
}

extension PostgresConnection {
    /// The rows of a query as a `Table`.
    func table(_ sql: String, _ parameters: [(any PostgresBindable)?] = []) throws -> Table {
        Table(try query(sql, parameters))
    }

    /// A person's newest sample end as held on their row (persons.newest_end_at), as HH:MI UTC.
    func newestEnd(of person: String) throws -> String? {
        try query("SELECT to_char(newest_end_at AT TIME ZONE 'UTC', 'HH24:MI') FROM health_store.persons WHERE person = $1",
                  [person]).first?[0] ?? nil
    }
}

/// Reads a cell as a Double (nil for SQL NULL or a missing column).
func double(_ row: [String: String?], _ column: String) -> Double? {
    guard let cell = row[column], let text = cell else { return nil }
    return Double(postgresText: text)
}

/// True when a cell is SQL NULL (and the column exists).
func isNull(_ row: [String: String?], _ column: String) -> Bool {
    guard let cell = row[column] else { return false }
    return cell == nil
}

/// The text of a cell, nil for NULL.
func text(_ row: [String: String?], _ column: String) -> String? {
    row[column] ?? nil
}

/// A jsonb object of numbers, parsed.
func jsonNumbers(_ row: [String: String?], _ column: String) -> [String: Double]? {
    guard let t = text(row, column), let data = t.data(using: .utf8),
          let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
    var out: [String: Double] = [:]
    for (k, v) in object { if let n = v as? NSNumber { out[k] = n.doubleValue } }
    return out
}

/// A PostgreSQL array of uuids (`{a,b}`), parsed to upper-case strings.
func uuidArray(_ row: [String: String?], _ column: String) -> Set<String>? {
    guard let t = text(row, column) else { return nil }
    let inner = t.dropFirst().dropLast()
    if inner.isEmpty { return [] }
    return Set(inner.split(separator: ",").map { $0.uppercased() })
}

/// Two doubles equal up to rounding in the last digits.
func close(_ a: Double?, _ b: Double?, tolerance: Double = 1e-9) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case let (x?, y?): return abs(x - y) <= tolerance * max(1, abs(x), abs(y))
    default: return false
    }
}

/// Compares two results cell by cell: equal text, or numbers within rounding, or JSON objects
/// of numbers within rounding. Returns a description of each difference (empty when equal).
func differences(_ actual: Table, _ expected: Table, label: String, limit: Int = 10) -> [String] {
    var out: [String] = []
    if actual.columns != expected.columns {
        return ["\(label): columns \(actual.columns) vs \(expected.columns)"]
    }
    if actual.count != expected.count {
        out.append("\(label): \(actual.count) rows vs \(expected.count) expected")
    }
    for (i, (a, e)) in zip(actual.rows, expected.rows).enumerated() where out.count < limit {
        for (c, (x, y)) in zip(a, e).enumerated() where !cellsMatch(x, y) {
            out.append("\(label) row \(i) \(actual.columns[c]): \(x ?? "NULL") vs expected \(y ?? "NULL") — row \(a.map { $0 ?? "NULL" })")
            break
        }
    }
    return out
}

func cellsMatch(_ x: String?, _ y: String?) -> Bool {
    if x == y { return true }
    guard let x, let y else { return false }
    if let a = Double(postgresText: x), let b = Double(postgresText: y) { return close(a, b) }
    if x.hasPrefix("{"), y.hasPrefix("{"),
       let a = try? JSONSerialization.jsonObject(with: Data(x.utf8)) as? [String: Any],
       let b = try? JSONSerialization.jsonObject(with: Data(y.utf8)) as? [String: Any] {
        guard Set(a.keys) == Set(b.keys) else { return false }
        for (k, v) in a {
            if let n = v as? NSNumber, let m = b[k] as? NSNumber {
                if !close(n.doubleValue, m.doubleValue) { return false }
            } else if !(v is NSNull && b[k] is NSNull) {
                return false
            }
        }
        return true
    }
    return false
}

