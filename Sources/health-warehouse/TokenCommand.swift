import Foundation
import Postgres
import Warehouse

/// `health-warehouse token create|list|revoke`
struct TokenCommand: Command {
    static let name = "token"
    static let summary = "create, list or revoke receiver credentials"
    static let help = """
        usage: health-warehouse token create --person NAME [--label TEXT] [--expires-in DURATION]
                                             [database options]
               health-warehouse token list [--json] [database options]
               health-warehouse token revoke ID [database options]

        create  mints a token for NAME and prints only the token on stdout. It is shown once:
                only its SHA-256 is stored. Put it in the app's credential header as
                `Authorization: Bearer <token>` (or the bare token with another --auth-header).
                Once any token exists, every request needs one; the token decides the person.
                --expires-in DURATION (30m, 1h, 7d…) makes it stop working that long from
                now, on every path: a short-lived token for an app pushing Stridee bodies,
                which asks its backend for a fresh one. Without it, a token never expires.
        list    id, person, label, created, last used, revoked and expiry time of every token
        revoke  revokes the token with that id (from `token list`)

        \(DatabaseOptions.help)
        """

    enum Action {
        case create(person: String, label: String?, expiresIn: Double?)
        case list(json: Bool)
        case revoke(id: Int64)
    }

    var action: Action
    var database: DatabaseOptions

    init(arguments: [String]) throws {
        let parsed = try ParsedArguments(arguments, command: Self.name, flags: ["json"],
                                         options: DatabaseOptions.optionNames.union(["person", "label", "expires-in"]))
        database = DatabaseOptions(parsed)
        switch parsed.positionals.first {
        case let action? where (action == "create" || action == "list") && parsed.positionals.count > 1:
            throw UsageError(message: "token \(action) takes no arguments, got \"\(parsed.positionals[1])\"", command: Self.name)
        case "create":
            guard let person = parsed.value("person") else {
                throw UsageError(message: "token create needs --person NAME", command: Self.name)
            }
            do { try PersonName.validate(person) } catch { throw UsageError(message: "\(error)", command: Self.name) }
            var expiresIn: Double?
            if let text = parsed.value("expires-in") {
                guard let seconds = Duration.seconds(text), seconds >= 1, seconds <= 3650 * 86_400 else {
                    throw UsageError(message: "--expires-in must be a duration from 1s to 3650d such as 30m, 1h or 7d, got \"\(text)\"",
                                     command: Self.name)
                }
                expiresIn = seconds
            }
            action = .create(person: person, label: parsed.value("label"), expiresIn: expiresIn)
        case "list":
            action = .list(json: parsed.has("json"))
        case "revoke":
            guard parsed.positionals.count == 2, let id = Int64(parsed.positionals[1]) else {
                let given = parsed.positionals.count == 2 ? ", a number; got \"\(parsed.positionals[1].prefix(80))\"" : ""
                throw UsageError(message: "token revoke needs the token's id\(given) (see `token list`)", command: Self.name)
            }
            action = .revoke(id: id)
        case let other?:
            throw UsageError(message: "unknown token action \"\(other)\"; use create, list or revoke", command: Self.name)
        case nil:
            throw UsageError(message: "token needs an action: create, list or revoke", command: Self.name)
        }
    }

    func run() throws -> Int32 {
        try database.withDatabase(migrate: true) { url in
            let pool = PostgresPool(connectionString: url, maxConnections: 1)
            defer { pool.close() }
            let tokens = TokenStore(pool: pool)
            switch action {
            case .create(let person, let label, let expiresIn):
                let (token, id) = try tokens.create(person: person, label: label, expiresIn: expiresIn)
                printOutput(token)
                let expiry = expiresIn == nil ? "" : ", expiring \(ISO8601.format(Date().addingTimeInterval(expiresIn!)))"
                printError("token \(id) created for person \(person)\(expiry); it is shown only now. Send it as: Authorization: Bearer <token>")
            case .list(let json):
                let rows = try tokens.list()
                if json {
                    let objects = rows.map { row -> [String: Any] in
                        ["id": row.id, "person": row.person, "label": row.label as Any,
                         "created_at": ISO8601.format(row.createdAt), "last_used_at": row.lastUsedAt.map(ISO8601.format) as Any,
                         "revoked_at": row.revokedAt.map(ISO8601.format) as Any,
                         "expires_at": row.expiresAt.map(ISO8601.format) as Any]
                    }
                    let data = try JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys])
                    printOutput(String(decoding: data, as: UTF8.self))
                } else {
                    printOutput("id\tperson\tlabel\tcreated_at\tlast_used_at\trevoked_at\texpires_at")
                    for row in rows {
                        printOutput("\(row.id)\t\(row.person)\t\(row.label ?? "")\t\(ISO8601.format(row.createdAt))\t\(row.lastUsedAt.map(ISO8601.format) ?? "")\t\(row.revokedAt.map(ISO8601.format) ?? "")\t\(row.expiresAt.map(ISO8601.format) ?? "")")
                    }
                }
            case .revoke(let id):
                guard try tokens.revoke(id: id) else {
                    throw CommandFailure(message: "no live token with id \(id)", hint: "`health-warehouse token list` shows the ids")
                }
                printError("token \(id) revoked")
            }
            return 0
        }
    }
}

/// ISO 8601 in UTC with seconds (`2026-08-21T08:25:30Z`).
enum ISO8601 {
    static func format(_ date: Date) -> String {
        var t = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
