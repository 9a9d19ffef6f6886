import Foundation
import Testing
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

    @Test("a day without a value draws nothing (a gap, not a zero bar) and today is drawn hollow")
    func chartGapsAndPartial() {
        let points = [
            SVGChart.Point(slot: 0, values: [100], label: "2026-01-01: 100 steps", partial: false),
            SVGChart.Point(slot: 2, values: [50], label: "2026-01-03: 50 steps (today, so far)", partial: true),
        ]
        let svg = SVGChart(title: "Steps", unit: "steps", style: .bars, slots: 3, points: points,
                           slotLabels: ("2026-01-01", "2026-01-02", "2026-01-03")).svg()
        #expect(svg.components(separatedBy: "<rect").count - 1 == 2)
        #expect(svg.contains("<g class=\"partial\"><title>2026-01-03: 50 steps (today, so far)</title>"))
        #expect(!svg.contains("2026-01-02:"))
        // Slot 1 would be centred at x = 46 + 1.5 * 668/3 = 380: no mark starts there.
        #expect(!svg.contains("x=\"354"))
    }

    @Test("axis labels stay short: thousands as k")
    func axisLabels() {
        #expect(SVGChart.axisNumber(10_000, decimals: 0) == "10k")
        #expect(SVGChart.axisNumber(2_500, decimals: 0) == "2.5k")
        #expect(SVGChart.axisNumber(500, decimals: 0) == "500")
        #expect(SVGChart.axisNumber(80.5, decimals: 1) == "80.5")
    }

    @Test("a line is broken where a day is missing")
    func lineBreaks() {
        let points = [0, 1, 3].map { SVGChart.Point(slot: $0, values: [Double(50 + $0)], label: "d\($0)", partial: false) }
        let svg = SVGChart(title: "Resting heart rate", unit: "bpm", style: .line, slots: 4, points: points,
                           slotLabels: ("a", "b", "c")).svg()
        let path = svg.firstMatch(of: /d="([^"]*)"/).map { String($0.1) } ?? ""
        #expect(path.filter { $0 == "M" }.count == 2)
        #expect(path.filter { $0 == "L" }.count == 1)
        #expect(svg.components(separatedBy: "<circle").count - 1 == 3)
    }

    @Test("a hostile value in a chart's words stays text")
    func chartEscapes() {
        let points = [SVGChart.Point(slot: 0, values: [1], label: "<script>alert(1)</script>", partial: false)]
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
