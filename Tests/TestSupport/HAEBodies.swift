import Foundation

/// Health Auto Export bodies for tests, written from the app's documented format:
/// `{"data": {"metrics": [{"name", "units", "data": [points]}], "workouts": [...], …}}`, dates
/// `yyyy-MM-dd HH:mm:ss ±hhmm`.
public enum HAEBodies {
    /// A point `{"date", "qty", "source"}` (no source: the app's own points carry none).
    public static func point(_ date: String, _ qty: String, source: String? = nil) -> String {
        "{\"date\":\"\(date)\",\"qty\":\(qty)" + (source.map { ",\"source\":\"\($0)\"" } ?? "") + "}"
    }

    /// A metric of points (each a JSON object's text).
    public static func metric(_ name: String, _ units: String, _ points: [String]) -> String {
        "{\"name\":\"\(name)\",\"units\":\"\(units)\",\"data\":[\(points.joined(separator: ","))]}"
    }

    /// A version 2 workout with a heart rate series and a route of `routePoints` points a
    /// minute apart from its start.
    public static func workout(id: String?, name: String = "Outdoor Run", start: String, end: String, duration: Double? = nil,
                               distanceKm: Double? = nil, energyKcal: Double? = nil, heartRates: [Double] = [],
                               routePoints: Int = 0) -> String {
        var members = [#""name":"\#(name)""#, #""start":"\#(start)""#, #""end":"\#(end)""#]
        if let id { members.append(#""id":"\#(id)""#) }
        if let duration { members.append(#""duration":\#(duration)"#) }
        if let distanceKm { members.append(#""distance":{"qty":\#(distanceKm),"units":"km"}"#) }
        if let energyKcal { members.append(#""activeEnergyBurned":{"qty":\#(energyKcal),"units":"kcal"}"#) }
        // `start` plus k minutes (within its day), as the app writes a date.
        func minute(_ k: Int) -> String {
            let m = Int(start.dropFirst(14).prefix(2))! + k
            return String(start.prefix(11)) + two(Int(start.dropFirst(11).prefix(2))! + m / 60) + ":" + two(m % 60) + ":00 "
                + String(start.suffix(5))
        }
        if !heartRates.isEmpty {
            let points = heartRates.enumerated().map { #"{"date":"\#(minute($0.offset))","Min":\#($0.element - 5),"Avg":\#($0.element),"Max":\#($0.element + 5),"units":"bpm"}"# }
            members.append(#""heartRateData":[\#(points.joined(separator: ","))]"#)
        }
        if routePoints > 0 {
            let points = (0..<routePoints).map { k in
                #"{"latitude":\#(52.52 + Double(k) * 0.001),"longitude":13.405,"altitude":\#(30 + k),"timestamp":"\#(minute(k))","speed":3.0}"#
            }
            members.append(#""route":[\#(points.joined(separator: ","))]"#)
        }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// A body of metrics, workouts and any other members of `data` (`"symptoms":[…]`).
    public static func body(metrics: [String] = [], workouts: [String] = [], other: [String] = []) -> [UInt8] {
        var members = ["\"metrics\":[\(metrics.joined(separator: ","))]", "\"workouts\":[\(workouts.joined(separator: ","))]"]
        members += other
        return Array("{\"data\":{\(members.joined(separator: ","))}}".utf8)
    }

    private static func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
}
