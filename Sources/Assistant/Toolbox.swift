import HealthPayload

/// The tools the server offers, each reading the `health` views for one person through the
/// `AssistantReader`: `summary`, `day`, `readings`, `sleep`, `workouts`, `trend`,
/// `freshness`, `metrics`, and `sql` only where the owner allowed it (`mcp --allow-sql`,
/// never over HTTP).
public struct Toolbox: Sendable {
    let reader: AssistantReader
    /// In the order `tools/list` gives them.
    let tools: [Tool]

    /// The tools over `reader`; `allowSQL` adds `sql`.
    public init(reader: AssistantReader, allowSQL: Bool) {
        self.reader = reader
        var tools = [Self.summary(reader), Self.day(reader), Self.readings(reader), Self.sleep(reader), Self.workouts(reader),
                     Self.trend(reader), Self.freshness(reader), Self.metrics(reader)]
        if allowSQL { tools.append(Self.sql(reader)) }
        self.tools = tools
    }

    /// The tool called `name`, if offered.
    func tool(_ name: String) -> Tool? {
        tools.first { $0.name == name }
    }

    /// `{"person": P, "rows": <rows>}` where `rows` is a JSON array's text.
    static func rows(_ person: String, _ rows: String) -> JSONValue {
        .object([("person", .string(person)), ("rows", .raw(rows))])
    }

    static func summary(_ reader: AssistantReader) -> Tool {
        Tool(name: "summary", title: "Days side by side",
             description: """
                Every metric of each local day from `from` to `to` (health.daily_summary): steps, distance, \
                energy, exercise, sleep, heart rate, HRV, body values, workouts. Totals are the one winning \
                source's (phone and watch are never added up); readings are the day's mean; a column is null \
                when that metric had no data that day, and a day without any data has no row (no data is not \
                zero). is_partial marks today, not over yet: leave it out of averages.
                """,
             arguments: Schema.range, outputSchema: Schema.rows(reader.catalog.rowSchema("daily_summary"))) { arguments, person in
            let range = try arguments.range()
            return rows(person, try reader.rows("daily_summary", person: person, range: (range.from.description, range.to.description)))
        }
    }

    static func readings(_ reader: AssistantReader) -> Tool {
        let names = reader.metrics.filter { $0.rule == "reading" }.map(\.metric)
        return Tool(name: "readings", title: "Readings per day",
                    description: """
                        Min, mean and max of one reading per local day, across every source, with the number of \
                        readings (health.daily_readings): heart rate, resting and walking heart rate, HRV (SDNN), \
                        oxygen saturation (a fraction, 0.97), respiratory rate, VO2 max, body temperature, blood pressure.
                        """,
                    arguments: [("metric", Schema.string("The reading's catalog metric name.", among: names))] + Schema.range,
                    outputSchema: Schema.rows(reader.catalog.rowSchema("daily_readings"))) { arguments, person in
            let metric = try arguments.choice("metric", among: names)
            let range = try arguments.range()
            return rows(person, try reader.rows("daily_readings", person: person, range: (range.from.description, range.to.description),
                                                filter: "AND v.metric = $4", [metric]))
        }
    }

    static func sleep(_ reader: AssistantReader) -> Tool {
        Tool(name: "sleep", title: "Nights",
             description: """
                Each night from `from` to `to`, on the local day of waking (health.daily_sleep): minutes asleep \
                and per stage (core, deep, REM, unspecified), awake and in bed, from the one source with the most \
                sleep; the other sources' minutes asleep in alternatives. A night with only time in bed (an \
                iPhone alone) has asleep_min null, never 0.
                """,
             arguments: Schema.range, outputSchema: Schema.rows(reader.catalog.rowSchema("daily_sleep"))) { arguments, person in
            let range = try arguments.range()
            return rows(person, try reader.rows("daily_sleep", person: person, range: (range.from.description, range.to.description)))
        }
    }

    static func workouts(_ reader: AssistantReader) -> Tool {
        Tool(name: "workouts", title: "Workouts",
             description: """
                Every workout that started on a local day from `from` to `to` (health.workouts), oldest first: \
                activity, start and end, duration, distance, energy, the source, heart rate (min, mean, max of \
                the recorded stream) and the route's length and climb when one was recorded. Two apps recording \
                one session are two rows listing each other in overlapping: never add them up.
                """,
             arguments: Schema.range, outputSchema: Schema.rows(reader.catalog.rowSchema("workouts"))) { arguments, person in
            let range = try arguments.range()
            return rows(person, try reader.rows("workouts", person: person, range: (range.from.description, range.to.description),
                                                order: "v.start_at, v.uuid"))
        }
    }
}
