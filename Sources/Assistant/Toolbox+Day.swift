import HealthPayload

extension Toolbox {
    /// The parts of `day`'s answer: key, view, whether it is one row (else a list), order.
    static let dayParts: [(key: String, view: String, single: Bool, order: String)] = [
        ("summary", "daily_summary", true, ""),
        ("totals", "daily_totals", false, "v.metric COLLATE \"C\""),
        ("sleep", "daily_sleep", true, ""),
        ("readings", "daily_readings", false, "v.metric COLLATE \"C\""),
        ("body", "daily_body", false, "v.metric COLLATE \"C\""),
        ("workouts", "workouts", false, "v.start_at, v.uuid"),
        ("coalesced", "coalesced_samples", false, "v.start_at, v.uuid"),
        ("deleted", "deleted_samples", false, "v.start_at, v.uuid"),
    ]

    /// How many quarantined samples `day` lists at most (the latest batches first).
    static let dayQuarantineLimit = 100

    static func day(_ reader: AssistantReader) -> Tool {
        var properties: [(key: String, value: JSONValue)] = [
            ("person", Schema.typed("string", "Whose data.")),
            ("day", Schema.typed("string", "The local day.", format: "date")),
        ]
        for part in dayParts {
            let row = reader.catalog.rowSchema(part.view)
            properties.append((part.key, part.single ? Schema.optional(row) : Schema.list(row)))
        }
        properties.append(("quarantined", Schema.list(reader.catalog.rowSchema("quarantine"))))
        let output: JSONValue = .object([
            ("type", .string("object")), ("properties", .object(properties)),
            ("required", .array(properties.map { .string($0.key) })),
        ])
        return Tool(name: "day", title: "One day in full",
                    description: """
                        Everything the views hold for one local day: summary (health.daily_summary, null without \
                        data), totals (each per-source metric with the source that counted and the alternatives it \
                        beat, health.daily_totals), sleep (the night ending that day, health.daily_sleep), readings \
                        (min/mean/max), body (the day's latest measurements), workouts, coalesced (samples Apple \
                        Health combined from finer ones: counted = false means left out, its parts count), deleted \
                        (samples Health no longer holds, counted nowhere) and quarantined (samples of batches received \
                        that day that broke the format, kept aside with the reason; at most \(dayQuarantineLimit)).
                        """,
                    arguments: [("date", Schema.string("The local day, YYYY-MM-DD.", format: "date"))],
                    outputSchema: output) { arguments, person in
            let date = try arguments.date("date")
            guard let text = try reader.json(person: person, daySQL, [date.description]) else { return .null }
            return .raw(text)
        }
    }

    /// One statement building the whole of `day`'s answer (`$1` the person, `$2` the day).
    static var daySQL: String {
        var parts = dayParts.map { part in
            let select = part.single ? "row_to_json(v)" : "coalesce(json_agg(v ORDER BY \(part.order)), '[]')"
            return "'\(part.key)', (SELECT \(select) FROM health.\(part.view) v WHERE v.person = $1 AND v.day = $2::date)"
        }
        // A quarantined sample has no day of its own: the batches received that local day (in
        // the person's time zone, or with none in their phone's offset, as health.today).
        parts.append("""
            'quarantined', (SELECT coalesce(json_agg(v ORDER BY v.received_at, v.position), '[]') FROM (
                SELECT q.* FROM health.quarantine q, bounds b WHERE q.person = $1 AND q.received_at >= b.first AND q.received_at < b.next
                ORDER BY q.received_at DESC, q.position LIMIT \(dayQuarantineLimit)) v)
            """)
        // The day's bounds first, on their own (a function reading a table, never inside a query
        // over the views: on Citus a worker cannot run it; docs/scaling.md).
        return "WITH bounds AS MATERIALIZED (SELECT health.day_start($1, $2::date) AS first, health.day_start($1, $2::date + 1) AS next) "
            + "SELECT json_build_object('person', $1::text, 'day', $2::date, " + parts.joined(separator: ", ") + ")::text"
    }
}
