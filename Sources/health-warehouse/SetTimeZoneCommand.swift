import Foundation
import HealthPayload
import Postgres
import Warehouse

/// `health-warehouse set-time-zone TZ [--person P]`
struct SetTimeZoneCommand: Command {
    static let name = "set-time-zone"
    static let summary = "set a person's IANA time zone (re-days their samples)"
    static let help = """
        usage: health-warehouse set-time-zone TZ [--person NAME] [database options]

        Sets the person's time zone (an IANA name such as Europe/Berlin), which decides the
        local day every sample belongs to, and re-days everything already stored for them.
        With no time zone set, a sample's day is taken in the UTC offset written in its own
        timestamp. `--person` defaults to `default`.

        \(DatabaseOptions.help)
        """

    var timeZone: String
    var person: String
    var database: DatabaseOptions

    init(arguments: [String]) throws {
        let parsed = try ParsedArguments(arguments, command: Self.name, flags: [],
                                         options: DatabaseOptions.optionNames.union(["person"]))
        guard parsed.positionals.count == 1 else {
            throw UsageError(message: "set-time-zone needs exactly one time zone, e.g. Europe/Berlin", command: Self.name)
        }
        timeZone = parsed.positionals[0]
        if let excess = TextLimit.excess(timeZone) {
            throw UsageError(message: "the time zone is \(excess); use an IANA name such as Europe/Berlin", command: Self.name)
        }
        person = parsed.value("person") ?? PersonName.defaultPerson
        do { try PersonName.validate(person) } catch { throw UsageError(message: "\(error)", command: Self.name) }
        database = DatabaseOptions(parsed)
    }

    func run() throws -> Int32 {
        try database.withConnection(migrate: true) { connection in
            let known: Bool = try connection.query("SELECT health_store.person_exists($1)", [person]).first!.decode(0)
            do {
                try connection.query("SELECT health.set_time_zone($1, $2)", [person, timeZone])
            } catch let error as PostgresError where error.kind == .server && error.sqlState == SQLState.invalidParameterValue {
                // A time zone PostgreSQL does not know is a usage error, as a malformed one is.
                throw CommandFailure(message: error.message, hint: "use an IANA name such as Europe/Berlin or America/New_York", status: 64)
            }
            printError("time zone of \(person) set to \(timeZone); their samples are re-dayed")
            if !known {
                // Setting it before the first push is right; a mistyped name is not: say so.
                printError("note: nothing of \(person) was held before (no sample, no token): the time zone waits for their first data; "
                           + "`person list` shows who is held")
            }
            return 0
        }
    }
}
