/// The paths under `/ui`, matched before the receiver's "`POST` to any path is a batch" rule.
/// `nil` for every path outside `/ui`.
enum UIRoute: Equatable, Sendable {
    /// `/ui` (30 days) or `/ui/days/N` for N in 30, 90, 365.
    case days(Int)
    /// `/ui/workouts/UUID`.
    case workout(String)
    case stylesheet
    case icon
    case signIn
    case signOut
    /// Anything else under `/ui`.
    case notFound

    static func match(_ path: String) -> UIRoute? {
        guard path == "/ui" || path.hasPrefix("/ui/") else { return nil }
        switch path {
        case "/ui", "/ui/": return .days(30)
        case "/ui/style.css": return .stylesheet
        case "/ui/icon.svg": return .icon
        case "/ui/sign-in": return .signIn
        case "/ui/sign-out": return .signOut
        default: break
        }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return .notFound }
        if parts[2] == "days", let days = Int(parts[3]), PageLayout.periods.contains(days), String(days) == parts[3] {
            return .days(days)
        }
        if parts[2] == "workouts", isUUID(parts[3]) { return .workout(String(parts[3]).lowercased()) }
        return .notFound
    }

    /// The methods the route answers (`405` with `Allow` for others).
    var methods: [String] {
        switch self {
        case .signOut: return ["POST"]
        case .signIn: return ["GET", "HEAD", "POST"]
        default: return ["GET", "HEAD"]
        }
    }

    /// 8-4-4-4-12 hexadecimal digits.
    static func isUUID(_ text: Substring) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}
