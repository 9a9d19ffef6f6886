import Foundation
import Testing
import TestSupport
@testable import WebUI

@Suite("The page's pieces: escaping, numbers, charts, routes")
struct RenderingTests {
    @Test("every character that could open a tag or end an attribute is escaped; other text is unchanged")
    func escaping() {
        #expect(HTML.escape("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;")
        #expect(HTML.escape("a\"b'c&d") == "a&quot;b&#39;c&amp;d")
        #expect(HTML.escape("com.apple.health.Ä 😀") == "com.apple.health.Ä 😀")
        #expect(HTML.escape("&amp;") == "&amp;amp;")
    }

    @Test("numbers are rounded, grouped and carry their units")
    func numbers() {
        #expect(Format.number(8123.4) == "8,123")
        #expect(Format.number(1_234_567.891, decimals: 2) == "1,234,567.89")
        #expect(Format.with(6.125, decimals: 2, unit: "km") == "6.13 km")
        #expect(Format.with(0.05, decimals: 1, unit: "kg") == "0.1 kg")
        #expect(Format.number(-3.5, decimals: 1) == "−3.5")
        #expect(Format.minutes(432.4) == "7 h 12 min")
        #expect(Format.minutes(45) == "45 min")
        #expect(Format.minutes(61) == "1 h 01 min")
        #expect(Format.ago(hours: 3.1) == "3 h 6 min ago")
        #expect(Format.ago(hours: 50) == "2 days 2 h ago")
    }

    @Test("a day without a value draws nothing (a gap, not a zero bar) and today is drawn hollow with its words")
    func chartGapsAndPartial() {
        let points = [
            SVGChart.Point(slot: 0, values: [100], label: "2026-01-01: 100 steps", partial: false),
            SVGChart.Point(slot: 2, values: [50], label: "2026-01-03: 50 steps (today, so far)", partial: true),
        ]
        let svg = SVGChart(title: "Steps", unit: "steps", style: .bars, slots: 3, points: points,
                           slotLabels: ("2026-01-01", "2026-01-02", "2026-01-03")).svg()
        // Slots are 668 / 3 wide from x = 46: slot 0 centred at 157.3, slot 1 at 380, slot 2 at 602.7.
        let strokes = svg.firstMatch(of: /<path class="m s0" stroke-width="[0-9.]+" d="([^"]*)"/).map { String($0.1) }
        #expect(strokes == "M157.3 126V8", "one bar from the axis (y 126) to 100 at the top (y 8)")
        #expect(svg.contains("<rect class=\"partial\" x=\"522.5\""))
        #expect(svg.contains("<title>2026-01-03: 50 steps (today, so far)</title>"))
        #expect(!svg.contains("M380"))
    }

    @Test("a line is broken where a day is missing; a dot per day")
    func lineBreaks() {
        let points = [0, 1, 3].map { SVGChart.Point(slot: $0, values: [Double(50 + $0)], label: "d\($0)", partial: false) }
        let svg = SVGChart(title: "Resting heart rate", unit: "bpm", style: .line, slots: 4, points: points,
                           slotLabels: ("a", "b", "c")).svg()
        let trend = svg.firstMatch(of: /class="trend" d="([^"]*)"/).map { String($0.1) } ?? ""
        #expect(trend.filter { $0 == "M" }.count == 2)
        #expect(trend.filter { $0 == "L" }.count == 1)
        let dots = svg.firstMatch(of: /class="m dots" stroke-width="[0-9.]+" d="([^"]*)"/).map { String($0.1) } ?? ""
        #expect(dots.components(separatedBy: "h0").count - 1 == 3)
    }

    @Test("a hostile value in a chart's words stays text")
    func chartEscapes() {
        let points = [SVGChart.Point(slot: 0, values: [1], label: "<script>alert(1)</script>", partial: true)]
        let svg = SVGChart(title: "x", unit: "u", style: .bars, slots: 1, points: points, slotLabels: ("a", "b", "c")).svg()
        #expect(!svg.contains("<script>"))
        #expect(svg.contains("&lt;script&gt;"))
    }

    @Test("axis ends are round numbers around the data", arguments: [(8123.0, 10000.0), (0.4, 0.5), (240.0, 250.0), (51.0, 100.0)])
    func niceCeiling(value: Double, expected: Double) {
        #expect(SVGChart.niceCeiling(value) == expected)
    }

    @Test("only paths under /ui are the page's, and only the periods offered")
    func routes() {
        #expect(UIRoute.match("/ui") == .days(30))
        #expect(UIRoute.match("/ui/days/365") == .days(365))
        #expect(UIRoute.match("/ui/days/7") == .notFound)
        #expect(UIRoute.match("/ui/days/0365") == .notFound)
        #expect(UIRoute.match("/uix") == nil)
        #expect(UIRoute.match("/") == nil)
        #expect(UIRoute.match("/v1/device/apple/workouts") == nil)
        #expect(UIRoute.match("/ui/workouts/A1B2C3D4-0000-4000-8000-000000000001") == .workout("a1b2c3d4-0000-4000-8000-000000000001"))
        #expect(UIRoute.match("/ui/workouts/1;DROP") == .notFound)
        #expect(UIRoute.signOut.methods == ["POST"])
    }

    @Test("source keys are short, stable in byte order, and the legend escapes names")
    func sourceKeys() {
        let keys = SourceKeys(["b.watch", "<script>alert(1)</script>", "a.phone", "b.watch"])
        #expect(keys["<script>alert(1)</script>"] == "A")
        #expect(keys["a.phone"] == "B")
        #expect(keys["b.watch"] == "C")
        #expect(keys.legend().contains("<dd>&lt;script&gt;alert(1)&lt;/script&gt;</dd>"))
        #expect([0, 25, 26, 27, 701, 702].map(SourceKeys.key) == ["A", "Z", "AA", "AB", "ZZ", "AAA"])
    }
}

@Suite("gzip of the page")
struct GzipTests {
    /// `gzip -dc` of `bytes`: the real tool reads what zlib wrote.
    static func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let path = NSTemporaryDirectory() + "hw-gzip-\(UUID().uuidString).gz"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let out = try CLIProcess.runProgram("/bin/gzip", ["-dc", path])
        guard out.status == 0 else { throw PageTestError("gzip -dc: \(out.stderr)") }
        return Array(out.stdout.utf8)
    }

    @Test("what Gzip.compress writes, gzip -dc reads back byte for byte, smaller")
    func roundTrip() throws {
        let page = Array(String(repeating: "<tr><th>2026-03-01</th><td>8,123 steps</td></tr>", count: 2000).utf8)
        let packed = try #require(Gzip.compress(page))
        #expect(packed.count < page.count / 10)
        #expect(packed.prefix(2) == [0x1f, 0x8b])
        #expect(try Self.gunzip(packed) == page)
    }

    @Test("gzip is used only when the browser accepts it", arguments: [
        ("gzip, deflate, br", true), ("br;q=1.0, gzip;q=0.8", true), ("*", true), ("gzip;q=0", false), ("gzip;q=0.000", false),
        ("identity", false), ("", false),
    ])
    func accepted(header: String, expected: Bool) {
        #expect(Gzip.accepted(header) == expected)
    }
}
