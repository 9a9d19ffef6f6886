import Foundation
import HealthPayload
import Testing

/// 2026-10-01T06:02:11Z in microseconds since the epoch.
private let base: Int64 = 1_790_834_531_000_000

@Suite("ISO 8601 timestamps (Stridee formats)")
struct ISO8601TimestampTests {
    @Test("the base instant is 2026-10-01T06:02:11Z")
    func baseInstant() {
        #expect(base == micros(2026, 10, 1, 6, 2, 11))
    }

    @Test("Z, ±hh:mm and ±hhmm, with and without fractional seconds, give the instant and the written offset",
          arguments: [
              ("2026-10-01T06:02:11Z", base, 0),
              ("2026-10-01T08:02:11+02:00", base, 7200),
              ("2026-10-01T08:02:11+0200", base, 7200),
              ("2026-10-01T00:32:11-05:30", base, -19_800),
              ("2026-10-01T00:32:11-0530", base, -19_800),
              ("2026-10-01T06:02:11-00:00", base, 0),
              ("2026-10-01T06:02:11.5Z", base + 500_000, 0),
              ("2026-10-01T08:02:11.250+02:00", base + 250_000, 7200),
              ("2026-10-01T08:02:11.123456+0200", base + 123_456, 7200),
              ("2026-10-01T06:02:11.000000000Z", base, 0),
              ("2026-10-01T06:02:11.1234564Z", base + 123_456, 0),
              ("2026-10-01T06:02:11.1234565Z", base + 123_457, 0),
              ("2026-10-01T06:02:11.9999996Z", base + 1_000_000, 0),
              ("2026-10-01T06:02:11.123456789123456789Z", base + 123_457, 0),
              ("2026-10-01T21:02:11+15:00", base, 54_000),
          ] as [(String, Int64, Int32)])
    func accepted(text: String, expected: Int64, offset: Int32) throws {
        let stamp = try #require(Timestamp(iso8601: text))
        #expect(stamp.microsecondsSinceEpoch == expected)
        #expect(stamp.offsetSeconds == offset)
    }

    @Test("anything else is refused", arguments: [
        "", "2026-10-01", "2026-10-01T06:02:11", "2026-10-01 06:02:11Z", "2026-10-01t06:02:11Z", "2026-10-01T06:02:11z",
        "2026-10-01T06:02Z", "2026-10-01T06:02:11.Z", "2026-10-01T06:02:11.5", "2026-10-01T06:02:11+02", "2026-10-01T06:02:11+2:00",
        "2026-10-01T06:02:11+02:0", "2026-10-01T06:02:11+02:00:00", "2026-10-01T06:02:11+16:00", "2026-10-01T06:02:11+02:60",
        "2026-10-01T06:02:11Z ", " 2026-10-01T06:02:11Z", "2026-13-01T06:02:11Z", "2026-02-29T06:02:11Z", "2026-04-31T06:02:11Z",
        "0000-01-01T00:00:00Z", "2026-10-01T24:00:00Z", "2026-10-01T06:60:11Z", "2026-10-01T06:02:60Z", "26-10-01T06:02:11Z",
        "2026-10-01T06:02:11.5.5Z", "2026-10-01T06:02:11,5Z", "+2026-10-01T06:02:11Z", "2026-1O-01T06:02:11Z",
    ])
    func refused(text: String) {
        #expect(Timestamp(iso8601: text) == nil)
    }

    @Test("leap days, the year range's ends and instants before 1970 are exact")
    func calendarEdges() throws {
        #expect(Timestamp(iso8601: "2024-02-29T12:00:00Z")?.microsecondsSinceEpoch == micros(2024, 2, 29, 12))
        #expect(Timestamp(iso8601: "2000-02-29T00:00:00Z")?.microsecondsSinceEpoch == 951_782_400_000_000)
        #expect(Timestamp(iso8601: "1900-02-29T00:00:00Z") == nil)
        #expect(Timestamp(iso8601: "1969-12-31T23:59:59.999999Z")?.microsecondsSinceEpoch == -1)
        #expect(Timestamp(iso8601: "0001-01-01T00:00:00Z")?.microsecondsSinceEpoch == -62_135_596_800_000_000)
        #expect(Timestamp(iso8601: "9999-12-31T23:59:59.999999Z")?.microsecondsSinceEpoch == 253_402_300_799_999_999)
    }

    @Test("the local date is taken in the written offset, also across midnight and before 1970")
    func localDate() throws {
        #expect(Timestamp(iso8601: "2026-10-01T23:30:00+02:00")?.localDate == "2026-10-01")
        #expect(Timestamp(iso8601: "2026-10-01T21:30:00Z")?.localDate == "2026-10-01")
        #expect(Timestamp(iso8601: "2026-10-01T00:30:00+02:00")?.localDate == "2026-10-01")
        #expect(Timestamp(iso8601: "2026-09-30T23:59:59.999999-10:00")?.localDate == "2026-09-30")
        #expect(Timestamp(iso8601: "1969-12-31T23:59:59.5Z")?.localDate == "1969-12-31")
        #expect(Timestamp(iso8601: "0001-01-01T00:00:00+01:00")?.localDate == "0001-01-01")
    }

    @Test("description is the UTC instant with microseconds")
    func description() throws {
        #expect(Timestamp(iso8601: "2026-10-01T08:02:11.25+02:00")?.description == "2026-10-01T06:02:11.250000Z")
        #expect(Timestamp(iso8601: "1969-12-31T23:59:59.999999Z")?.description == "1969-12-31T23:59:59.999999Z")
    }
}
