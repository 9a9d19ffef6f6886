import Foundation
import HealthPayload
import Testing
import TestSupport

/// Implausible values and instants, one table (`Plausibility`) for every way in —
/// a healthd sample is quarantined naming the key and the range, a Stridee body refused
/// naming the field.
@Suite("Plausibility")
struct PlausibilityTests {
    /// 2026-08-21T12:00:00Z: the day after tomorrow ends at 2026-08-24T00:00:00Z.
    static let now: Int64 = 1_787_313_600_000

    static func reason(_ sample: String) throws -> String? {
        guard case .batches(let batches) = try PayloadDecoder.decode(json: Array(Body.json(samples: [sample]).utf8), now: now) else {
            Issue.record("a probe")
            return nil
        }
        return batches[0].quarantined.first?.reason
    }

    @Test("a healthd sample's value outside its type's range is quarantined naming the value, the type and the range; the edges decide", arguments: [
        ("HKQuantityTypeIdentifierHeartRate", "-5", "value -5 is outside the plausible range of HKQuantityTypeIdentifierHeartRate: > 0 and < 400"),
        ("HKQuantityTypeIdentifierHeartRate", "0", "value 0 is outside the plausible range of HKQuantityTypeIdentifierHeartRate: > 0 and < 400"),
        ("HKQuantityTypeIdentifierHeartRate", "400", "value 400 is outside the plausible range of HKQuantityTypeIdentifierHeartRate: > 0 and < 400"),
        ("HKQuantityTypeIdentifierHeartRate", "399.9", nil),
        ("HKQuantityTypeIdentifierRestingHeartRate", "1e-9", nil),
        ("HKQuantityTypeIdentifierStepCount", "-1", "value -1 is outside the plausible range of HKQuantityTypeIdentifierStepCount: ≥ 0"),
        ("HKQuantityTypeIdentifierStepCount", "0", nil),
        ("HKQuantityTypeIdentifierDistanceWalkingRunning", "-0.5", "value -0.5 is outside the plausible range of HKQuantityTypeIdentifierDistanceWalkingRunning: ≥ 0"),
        ("HKQuantityTypeIdentifierActiveEnergyBurned", "-3", "value -3 is outside the plausible range of HKQuantityTypeIdentifierActiveEnergyBurned: ≥ 0"),
        ("HKQuantityTypeIdentifierBodyFatPercentage", "1.2", "value 1.2 is outside the plausible range of HKQuantityTypeIdentifierBodyFatPercentage: 0 to 1"),
        ("HKQuantityTypeIdentifierOxygenSaturation", "97", "value 97 is outside the plausible range of HKQuantityTypeIdentifierOxygenSaturation: 0 to 1"),
        ("HKQuantityTypeIdentifierOxygenSaturation", "1", nil),
        ("HKQuantityTypeIdentifierBodyMass", "0", "value 0 is outside the plausible range of HKQuantityTypeIdentifierBodyMass: > 0"),
        ("HKQuantityTypeIdentifierBodyTemperature", "-40", nil),
        // A catalog type the contract gives no bound (§1: "a type with no row here has no bound").
        ("HKQuantityTypeIdentifierLeanBodyMass", "-5", nil),
        ("HKQuantityTypeIdentifierSomethingNew", "-40", nil),
    ] as [(String, String, String?)])
    func healthdValues(type: String, value: String, reason: String?) throws {
        #expect(try Self.reason(Body.quantity(["type": "\"\(type)\"", "value": value])) == reason)
    }

    @Test("a workout's duration, distance or energy below 0 is quarantined, whatever the kind", arguments: [
        (["distanceMeters": "-1"], "distanceMeters -1 is outside its plausible range: ≥ 0"),
        (["durationSeconds": "-0.001"], "durationSeconds -0.001 is outside its plausible range: ≥ 0"),
        (["activeEnergyKilocalories": "-320"], "activeEnergyKilocalories -320 is outside its plausible range: ≥ 0"),
        (["distanceMeters": "0", "durationSeconds": "0"], nil),
    ] as [([String: String?], String?)])
    func workoutTotals(members: [String: String?], reason: String?) throws {
        #expect(try Self.reason(Body.workout(members)) == reason)
    }

    @Test("start and end lie from 1970-01-01 to the end of the day after tomorrow (UTC), offsets counted", arguments: [
        ("1970-01-01T00:00:00.000Z", nil), ("1969-12-31T23:59:59.999Z", "is before 1970-01-01"),
        ("1970-01-01T00:30:00.000+01:00", "is before 1970-01-01"), ("0001-01-01T00:00:00.000Z", "is before 1970-01-01"),
        ("2026-08-23T23:59:59.999Z", nil), ("2026-08-24T01:00:00.000+02:00", nil),
        ("2026-08-24T00:00:00.000Z", "is after the day after tomorrow (2026-08-23 UTC)"),
        ("9999-12-31T23:59:59.999Z", "is after the day after tomorrow (2026-08-23 UTC)"),
    ] as [(String, String?)])
    func instants(stamp: String, reason: String?) throws {
        #expect(try Self.reason(Body.quantity(["start": "\"\(stamp)\"", "end": "\"\(stamp)\""])) == reason.map { "start \($0)" })
        // (From the earliest plausible start, so that only the end's bound decides.)
        #expect(try Self.reason(Body.quantity(["start": "\"1970-01-01T00:00:00.000Z\"", "end": "\"\(stamp)\""])) == reason.map { "end \($0)" })
    }

    @Test("no sample ends before it starts; an instantaneous reading ends at its start")
    func span() throws {
        #expect(try Self.reason(Body.quantity(["start": "\"2026-08-21T10:00:00.000Z\"", "end": "\"2026-08-21T09:59:59.999Z\""])) == "end is before start")
        #expect(try Self.reason(Body.quantity(["start": "\"2026-08-21T12:00:00.000+02:00\"", "end": "\"2026-08-21T10:00:00.000Z\""])) == nil,
                "the same instant in two offsets")
        #expect(try Self.reason(Body.quantity(["start": "\"2026-08-21T12:00:00.000+02:00\"", "end": "\"2026-08-21T10:30:00.000+01:00\""])) == "end is before start",
                "an end written in an offset whose clock shows a later time is still earlier")
    }

    @Test("the audit's Stridee bodies are 400 naming the field: a negative heart rate, a negative distance, a route point dated year 1 or 9999", arguments: [
        (["heartRate": "[" + StrideeBody.sample("2026-10-01T06:02:16Z", "-60") + "]"], "heartRate[0].v: -60 is outside its plausible range: > 0 and < 400"),
        (["heartRate": "[" + StrideeBody.sample("2026-10-01T06:02:16Z", "112") + "," + StrideeBody.sample("2026-10-01T06:02:17Z", "400") + "]"],
         "heartRate[1].v: 400 is outside its plausible range: > 0 and < 400"),
        (["cyclingPower": "[" + StrideeBody.sample("2026-10-01T06:02:16Z", "-1") + "]"], "cyclingPower[0].v: -1 is outside its plausible range: ≥ 0"),
        (["totalDistanceMeters": "-8412.6"], "totalDistanceMeters: -8412.6 is outside its plausible range: ≥ 0"),
        (["totalEnergyKcal": "-1"], "totalEnergyKcal: -1 is outside its plausible range: ≥ 0"),
        (["route": "[" + StrideeBody.point() + "," + StrideeBody.point(t: "0001-01-01T00:00:00Z") + "]"],
         "route[1].t: \"0001-01-01T00:00:00Z\" is before 1970-01-01"),
        (["route": "[" + StrideeBody.point(t: "9999-12-31T23:59:59Z") + "]"], "route[0].t: \"9999-12-31T23:59:59Z\" is after the day after tomorrow (2026-08-23 UTC)"),
        (["startDate": "\"1960-10-01T06:02:11Z\""], "startDate: \"1960-10-01T06:02:11Z\" is before 1970-01-01"),
    ] as [([String: String?], String)])
    func strideeWorkout(members: [String: String?], message: String) throws {
        var body = members
        if members["startDate"] == nil {
            // Dated inside the test's clock, so only the member under test is wrong.
            body["startDate"] = "\"2026-08-21T06:02:11Z\""
            body["endDate"] = "\"2026-08-21T06:48:40Z\""
        }
        let text = StrideeBody.workout(body).replacingOccurrences(of: "2026-10-01T06:02", with: "2026-08-21T06:02")
        #expect(throws: StrideePayloadError.self) { try StrideeDecoder.decodeWorkout(Array(text.utf8), now: Self.now) }
        do {
            _ = try StrideeDecoder.decodeWorkout(Array(text.utf8), now: Self.now)
        } catch {
            #expect(error.description == message.replacingOccurrences(of: "2026-10-01T06:02", with: "2026-08-21T06:02"))
        }
    }

    @Test("wellness: a heart rate of 0, a body mass of 0, a negative HRV or a calendarDate before 1970 is 400 naming the item's field", arguments: [
        (StrideeBody.item("daily", ["restingHeartRate": "0"]), "items[0].restingHeartRate: 0 is outside its plausible range: > 0 and < 400"),
        (StrideeBody.item("body_composition", ["weightKg": "0"]), "items[0].weightKg: 0 is outside its plausible range: > 0"),
        (StrideeBody.item("hrv", ["samples": #"[{"t":"2026-10-01T01:00:00Z","v":-3}]"#]), "items[0].samples[0].v: -3 is negative"),
        (StrideeBody.item("daily", ["calendarDate": "\"1969-12-31\""]), "items[0].calendarDate: 1969-12-31 is before 1970-01-01"),
        (StrideeBody.item("daily", ["startTime": "\"2126-09-30T22:00:00Z\""]),
         "items[0].startTime: \"2126-09-30T22:00:00Z\" is after the day after tomorrow"),
    ])
    func wellness(item: String, message: String) throws {
        let error = try #require(wellnessError(StrideeBody.wellness([item])))
        #expect(error.description.hasPrefix(message), "\(error.description)")
    }

    @Test("the table holds each catalog quantity with a bound once, by its identifier")
    func table() {
        #expect(Set(Plausibility.values.map(\.type)).count == Plausibility.values.count)
        #expect(Plausibility.range(of: "HKQuantityTypeIdentifierHeartRate") == .heartRate)
        #expect(Plausibility.range(of: "HKQuantityTypeIdentifierBodyTemperature") == nil)
        #expect(PlausibleRange.heartRate.description == "> 0 and < 400")
        #expect(PlausibleRange.fraction.description == "0 to 1")
    }
}
