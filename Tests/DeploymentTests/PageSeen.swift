import Foundation

/// What `ui/browse.py` saw in headless Chromium, decoded from the JSON it prints.
struct PageSeen: Decodable {
    struct Cell: Decodable {
        var text: String
        var gap: Bool
        var bold: String?
    }
    struct Row: Decodable {
        var day: String?
        var uuid: String?
        var partial: Bool
        var header: String?
        var cells: [Cell]
    }
    struct Table: Decodable {
        var head: [String]
        var rows: [Row]
    }
    struct Chart: Decodable {
        var caption: String
        /// Days drawn: complete ones and today's outline.
        var marks: Int
        /// The words of today's mark.
        var partial: [String]
    }
    /// One page as the DOM held it.
    struct Page: Decodable {
        var title: String
        var h1: String?
        var person: String?
        var signInForm: Bool
        var error: String?
        var lastBatch: String?
        var newestSample: String?
        var stale: String?
        var workoutTotals: String?
        var leftOut: String?
        var tables: [String: Table]
        var legend: [String: String]
        var charts: [Chart]
        var scripts: Int
        var bodyText: String
        var htmlBytes: Int
    }
    struct Cookie: Decodable {
        var httpOnly: Bool?
        var sameSite: String?
        var secure: Bool?
        var path: String?
        var value: String?
    }
    struct Workout: Decodable {
        var h1: String?
        var routePoints: Int
        var heartRate: Bool
        var facts: String
    }

    var signedOut: Page
    var wrong: Page
    var wrongCookie: Cookie?
    var expired: Page
    var expiredCookie: Cookie?
    var me: Page
    var meCookie: Cookie?
    var meURL: String
    var focus: [String]
    var me365URL: String
    var me365: Page
    var workoutURL: String?
    var workout: Workout?
    var alex: Page
    var alexAlert: Bool
    var meAgain: Page
    var signedOutAgain: Page
    var afterSignOutCookie: Cookie?
    var replayedAfterSignOut: Bool
    var requests: [String]
    var consoleErrors: [String]
    var screenshots: [String]

    /// The first number in a cell's text (`8,123 steps`, `−0.40 km`), or nil.
    static func number(_ text: String) -> Double? {
        let cleaned = text.replacingOccurrences(of: ",", with: "").replacingOccurrences(of: "−", with: "-")
        guard let match = cleaned.firstMatch(of: /-?[0-9]+(\.[0-9]+)?/) else { return nil }
        return Double(match.0)
    }

    /// Minutes of `7 h 12 min` or `45 min`, or nil.
    static func minutes(_ text: String) -> Double? {
        if let match = text.firstMatch(of: /^([0-9]+) h ([0-9]+) min$/) { return Double(match.1)! * 60 + Double(match.2)! }
        if let match = text.firstMatch(of: /^([0-9]+) min$/) { return Double(match.1) }
        return nil
    }
}
