import Foundation
import HealthPayload
import Testing
import TestSupport

/// The decoders promise that what they accept, PostgreSQL accepts and reads the same way.
@Suite("Stridee decoders agree with PostgreSQL")
struct StrideePostgresAgreementTests {
    @Test("every timestamp shape the decoder accepts is the same instant in PostgreSQL's timestamptz input")
    func timestampsAgree() throws {
        let stamps = [
            "2026-10-01T06:02:11Z", "2026-10-01T08:02:11+02:00", "2026-10-01T08:02:11+0200", "2026-10-01T00:32:11-05:30",
            "2026-10-01T00:32:11-0530", "2026-10-01T06:02:11.5Z", "2026-10-01T08:02:11.250+02:00", "2026-10-01T06:02:11.1234567Z",
            "2026-10-01T06:02:11.123456789123Z", "2026-10-01T21:02:11+15:00", "2026-10-01T21:02:11-15:59", "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59.999999Z", "1969-12-31T23:59:59.999999Z", "2024-02-29T12:00:00-00:00",
        ]
        try TestPostgres.withDatabase { db in
            for text in stamps {
                let stamp = try #require(Timestamp(iso8601: text), "\(text)")
                let micros = try db.scalar("SELECT (extract(epoch FROM $1::timestamptz) * 1000000)::int8", [text], as: Int64.self)
                #expect(micros == stamp.microsecondsSinceEpoch, "\(text)")
            }
            // The first offset PostgreSQL refuses is refused by the decoder too.
            #expect(Timestamp(iso8601: "2026-10-01T22:02:11+16:00") == nil)
            #expect(throws: (any Error).self) {
                try db.scalar("SELECT $1::timestamptz", ["2026-10-01T22:02:11+16:00"], as: String.self)
            }
        }
    }

    @Test("accepted bodies with hostile strings and numbers cast to jsonb, and every known number to float8")
    func acceptedCastsCleanly() throws {
        let hostile = #"{"s":"\ud83d\ude00 \u001f \\ \" \/","n":[1e999,-1e-999,0.0000000000001e-300,123456789012345678901234567890],"k\u00e9y":null}"#
        let items = try StrideeDecoder.decodeWellness(Array(StrideeBody.wellness([
            StrideeBody.item("daily", ["steps": "1e15", "distanceMeters": "4.9e-300", "extra": hostile]),
            StrideeBody.item("pulse_ox", ["samples": #"[{"t":"2026-10-01T06:02:11.123456789Z","v":1E+2,"x":1e999}]"#]),
        ]).utf8))
        let w = try StrideeDecoder.decodeWorkout(Array(StrideeBody.workout(["extra": hostile, "totalEnergyKcal": "-0.0"]).utf8))
        try TestPostgres.withDatabase { db in
            for item in items {
                let text = try db.scalar("SELECT ($1::text::jsonb ->> 'kind')", [item.json], as: String.self)
                #expect(text == item.kind.rawValue)
            }
            let steps = try db.scalar("SELECT ($1::text::jsonb ->> 'steps')::float8", [items[0].json], as: Double.self)
            #expect(steps == 1e15)
            let distance = try db.scalar("SELECT ($1::text::jsonb ->> 'distanceMeters')::float8", [items[0].json], as: Double.self)
            #expect(distance == 4.9e-300)
            let v = try db.scalar("SELECT ($1::text::jsonb -> 'samples' -> 0 ->> 'v')::float8", [items[1].json], as: Double.self)
            #expect(v == 100)
            let keys = try db.scalar("SELECT string_agg(k, ',' ORDER BY k) FROM jsonb_object_keys($1::text::jsonb) AS k", [w.headerJSON], as: String.self)
            #expect(keys == "activityType,deviceName,duration,endDate,extra,format,serverType,sourceBundleId,sourceName,startDate,totalDistanceMeters,totalEnergyKcal,uuid")
        }
    }
}
