import Foundation

/// One workout's page: its totals, heart rate over time and, when it has one, its route drawn
/// as a line (no map tiles: nothing leaves this server).
struct WorkoutPage {
    let detail: WorkoutDetail

    func render(person: String, signOut: Bool) -> String {
        let row = detail.row
        var main = "<p><a href=\"/ui\">← Back to the days</a></p><h1>\(HTML.escape(row.name)), \(HTML.escape(detail.start))</h1>"
        main += "<dl class=\"facts\">" + fact("Start – end", "\(HTML.escape(detail.start)) – \(HTML.escape(detail.end)) (\(HTML.escape(detail.zone)))")
        main += fact("Duration", row.durationSeconds.map { Format.minutes($0 / 60) })
        main += fact("Distance", row.distanceMeters.map { Format.with($0 / 1000, decimals: 2, unit: "km") })
        main += fact("Active energy", row.energyKcal.map { Format.with($0, unit: "kcal") })
        main += fact("Heart rate (min / mean / max)", WorkoutList.heartRate(min: row.heartRateMin, mean: row.heartRateMean, max: row.heartRateMax))
        main += fact("Source", SourceKeys.shown(row.source, as: detail.sourceName) + (detail.deviceName.map { " (" + HTML.escape($0) + ")" } ?? ""))
        main += fact("Came in through", HTML.escape(row.origin))
        if row.overlapping > 0 { main += fact("Overlaps", "\(row.overlapping) other workout(s) of yours, kept apart") }
        main += "</dl>"
        main += heartRateSection() + routeSection()
        return PageLayout.document(title: "Health Warehouse: \(row.name)", person: person, period: nil, signOut: signOut, main: main)
    }

    private func fact(_ name: String, _ value: String?) -> String {
        "<div><dt>\(name)</dt><dd>\(value ?? "none recorded")</dd></div>"
    }

    func heartRateSection() -> String {
        var out = "<section id=\"heart-rate\" aria-labelledby=\"hr-h\"><h2 id=\"hr-h\">Heart rate</h2>"
        guard let last = detail.heartRate.last?.seconds, let low = detail.heartRate.map(\.bpm).min(),
              let high = detail.heartRate.map(\.bpm).max() else {
            return out + "<p>No heart rate was recorded during this workout.</p></section>"
        }
        let floor = (low / 10).rounded(.down) * 10, ceiling = max((high / 10).rounded(.up) * 10, floor + 10)
        let width = 720.0, height = 180.0, left = 40.0, bottom = 20.0
        let span = max(last, 60)
        let points = detail.heartRate.map { sample in
            SVGChart.r(left + (width - left - 6) * sample.seconds / span) + ","
                + SVGChart.r(6 + (height - bottom - 6) * (1 - (sample.bpm - floor) / (ceiling - floor)))
        }.joined(separator: " ")
        out += "<figure><figcaption>\(detail.heartRate.count) readings (\(detail.heartRateOrigin == "stream" ? "the workout's heart rate stream" : "heart rate samples recorded during it")), "
            + "from \(Format.number(low)) to \(Format.number(high)) bpm</figcaption>"
            + "<svg viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"Heart rate in bpm over the workout's \(Format.minutes(span / 60))\">"
            + "<g class=\"axis\"><text x=\"\(Int(left - 4))\" y=\"12\" text-anchor=\"end\">\(Format.number(ceiling))</text>"
            + "<text x=\"\(Int(left - 4))\" y=\"\(Int(height - bottom))\" text-anchor=\"end\">\(Format.number(floor))</text>"
            + "<text x=\"\(Int(left))\" y=\"\(Int(height - 4))\">0 min</text>"
            + "<text x=\"\(Int(width - 6))\" y=\"\(Int(height - 4))\" text-anchor=\"end\">\(Format.minutes(span / 60))</text></g>"
            + "<polyline class=\"hr\" points=\"\(points)\"/></svg></figure>"
        return out + "</section>"
    }

    func routeSection() -> String {
        var out = "<section id=\"route\" aria-labelledby=\"route-h\"><h2 id=\"route-h\">Route</h2>"
        guard detail.route.count >= 2 else { return out + "<p>No GPS route was recorded for this workout.</p></section>" }
        let line = RouteLine(detail.route)
        out += "<figure><figcaption>\(detail.route.count) GPS points"
            + (detail.routeDistanceMeters.map { ", \(Format.with($0 / 1000, decimals: 2, unit: "km"))" } ?? "")
            + (detail.elevationGainMeters.map { ", \(Format.with($0, unit: "m")) climbed" } ?? "")
            + "; north is up, no map underneath</figcaption>" + line.svg() + "</figure>"
        return out + "</section>"
    }
}

/// A route as an SVG line: latitude and longitude projected equirectangularly around the
/// route's middle (fine for the few kilometres of a workout), north up, fitted to the box.
struct RouteLine {
    static let size = 400.0
    static let maxPoints = 2000
    let points: [(x: Double, y: Double)]

    init(_ route: [(lat: Double, lon: Double)]) {
        let every = max(1, route.count / Self.maxPoints)
        var kept = stride(from: 0, to: route.count, by: every).map { route[$0] }
        if let last = route.last, every > 1 { kept.append(last) }
        let midLat = (kept.map(\.lat).min()! + kept.map(\.lat).max()!) / 2
        let xs = kept.map { $0.lon * cos(midLat * .pi / 180) }, ys = kept.map { -$0.lat }
        let minX = xs.min()!, minY = ys.min()!
        let extent = max(xs.max()! - minX, ys.max()! - minY, 1e-9)
        let scale = (Self.size - 20) / extent
        let offsetX = (Self.size - (xs.max()! - minX) * scale) / 2, offsetY = (Self.size - (ys.max()! - minY) * scale) / 2
        points = zip(xs, ys).map { (offsetX + ($0 - minX) * scale, offsetY + ($1 - minY) * scale) }
    }

    func svg() -> String {
        let path = points.map { SVGChart.r($0.x) + "," + SVGChart.r($0.y) }.joined(separator: " ")
        let start = points.first!, end = points.last!
        return "<svg class=\"route\" viewBox=\"0 0 \(Int(Self.size)) \(Int(Self.size))\" role=\"img\" aria-label=\"The route's shape, start marked with a circle, end with a square\">"
            + "<polyline class=\"route-line\" points=\"\(path)\"/>"
            + "<circle class=\"start\" cx=\"\(SVGChart.r(start.x))\" cy=\"\(SVGChart.r(start.y))\" r=\"6\"><title>start</title></circle>"
            + "<rect class=\"end\" x=\"\(SVGChart.r(end.x - 5))\" y=\"\(SVGChart.r(end.y - 5))\" width=\"10\" height=\"10\"><title>end</title></rect></svg>"
    }
}
