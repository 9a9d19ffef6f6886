import HealthPayload

extension Toolbox {
    static func trend(_ reader: AssistantReader) -> Tool {
        let names = reader.metrics.map(\.metric)
        let row: JSONValue = .object([
            ("type", .string("object")),
            ("properties", .object([
                ("person", Schema.typed("string", "Whose data.")),
                ("metric", Schema.typed("string", "The catalog metric.")),
                ("unit", Schema.typed("string", "Unit of mean, min and max (the views' unit: a fraction stays a fraction).", nullable: true)),
                ("bucket", Schema.typed("string", "week (Monday to Sunday) or month.")),
                ("start", Schema.typed("string", "First day of the week or month.", format: "date")),
                ("end", Schema.typed("string", "Last day of the week or month.", format: "date")),
                ("days", Schema.typed("integer", "Complete days with data in the bucket and in the range: the mean is over these.")),
                ("mean", Schema.typed("number", "Mean of the day values.")),
                ("min", Schema.typed("number", "Lowest day value.")),
                ("max", Schema.typed("number", "Highest day value.")),
            ])),
            ("required", .array(["person", "metric", "unit", "bucket", "start", "end", "days", "mean", "min", "max"].map { .string($0) })),
        ])
        return Tool(name: "trend", title: "Weekly or monthly means",
                    description: """
                        The mean, min and max of one metric's day values per week (Monday to Sunday) or month, over \
                        complete days only (today, not over yet, is left out) and only the days with data (a day \
                        without data is not a zero). Day values as the views count them: a total's winning source \
                        (health.daily_totals), a reading's daily mean (health.daily_readings), a body value's latest \
                        (health.daily_body), the number of workouts (health.daily_workouts). Weeks or months with no \
                        complete day of data have no row.
                        """,
                    arguments: [("metric", Schema.string("A catalog metric name (see the metrics tool).", among: names))] + Schema.range
                        + [("bucket", Schema.string("week or month.", among: ["week", "month"]))],
                    outputSchema: Schema.rows(row)) { arguments, person in
            let metric = try arguments.choice("metric", among: names)
            let range = try arguments.range()
            let bucket = try arguments.choice("bucket", among: ["week", "month"])
            let text = try reader.json(person: person, trendSQL, [metric, range.from.description, range.to.description, bucket])
            return rows(person, text ?? "[]")
        }
    }

    /// Each complete day's value of metric `$2` from `$3` to `$4` from the view of its rule,
    /// grouped by `$5` (`week` or `month`).
    static let trendSQL = """
        WITH d AS (
          SELECT v.day, v.value, v.unit, v.is_partial FROM health.daily_totals v
          WHERE v.person = $1 AND v.metric = $2 AND v.day BETWEEN $3::date AND $4::date
          UNION ALL
          SELECT v.day, v.mean, v.unit, v.is_partial FROM health.daily_readings v
          WHERE v.person = $1 AND v.metric = $2 AND v.day BETWEEN $3::date AND $4::date
          UNION ALL
          SELECT v.day, v.value, v.unit, s.is_partial FROM health.daily_body v
          JOIN health.daily_summary s ON s.person = v.person AND s.day = v.day
          WHERE v.person = $1 AND v.metric = $2 AND v.day BETWEEN $3::date AND $4::date
          UNION ALL
          SELECT v.day, v.workouts::double precision, 'count', v.is_partial FROM health.daily_workouts v
          WHERE v.person = $1 AND $2 = 'workouts' AND v.day BETWEEN $3::date AND $4::date
        ), b AS (
          SELECT date_trunc($5, d.day::timestamp)::date AS start, d.value, d.unit FROM d WHERE NOT d.is_partial
        )
        SELECT coalesce(json_agg(t ORDER BY t.start), '[]')::text FROM (
          SELECT $1::text AS person, $2::text AS metric, min(b.unit) AS unit, $5::text AS bucket, b.start,
                 (b.start + CASE $5 WHEN 'week' THEN interval '6 days' ELSE interval '1 month - 1 day' END)::date AS "end",
                 count(*)::integer AS days, avg(b.value) AS mean, min(b.value) AS min, max(b.value) AS max
          FROM b GROUP BY b.start
        ) t
        """

    static func freshness(_ reader: AssistantReader) -> Tool {
        let columns = reader.catalog.columns("freshness")
        return Tool(name: "freshness", title: "How recent the data is",
                    description: """
                        When the last batch arrived and the newest sample it holds (health.freshness), whether that \
                        is stale and, if so, the usual causes. Data arrives in batches when iOS lets the app run, \
                        typically within an hour: it is never current to the second. Every value is null before the \
                        first batch.
                        """,
                    arguments: [], outputSchema: reader.catalog.rowSchema("freshness")) { _, person in
            if let text = try reader.json(person: person, "SELECT row_to_json(v)::text FROM health.freshness v WHERE v.person = $1", []) {
                return .raw(text)
            }
            return .object(columns.map { ($0.name, $0.name == "person" ? .string(person) : .null) })
        }
    }

    static func metrics(_ reader: AssistantReader) -> Tool {
        Tool(name: "metrics", title: "What can be asked",
             description: """
                The catalog (health.catalog): each Apple Health type, its metric name (the unit is in the name), \
                the unit of its samples and the rule that makes its day value: total (the one source with the \
                largest total wins, never a sum), sleep (likewise, by minutes asleep), reading (min, mean, max \
                across sources), latest (the day's latest measurement) or workout (count and totals).
                """,
             arguments: [], outputSchema: Schema.rows(reader.catalog.rowSchema("catalog"))) { _, person in
            rows(person, try reader.json(person: person, "SELECT coalesce(json_agg(v), '[]')::text FROM health.catalog v WHERE $1::text IS NOT NULL", []) ?? "[]")
        }
    }
}
