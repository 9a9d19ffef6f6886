/// The days page's tables: every charted value as text, the winning sources, sleep stages and
/// HealthKit's own totals. Newest day first; a day with no data says so, never 0.
extension DaysPage {
    static let noData = "<td class=\"gap\">no data</td>"

    /// A scrollable, keyboard-focusable box around a wide table, titled by heading `id`.
    static func table(id: String, title: String, intro: String, head: [String], rows: String) -> String {
        "<section id=\"\(id)\" aria-labelledby=\"\(id)-h\"><h2 id=\"\(id)-h\">\(title)</h2>\(intro)"
            + "<div class=\"scroll\" tabindex=\"0\" role=\"region\" aria-labelledby=\"\(id)-h\"><table><thead><tr>"
            + head.map { "<th scope=\"col\">\($0)</th>" }.joined() + "</tr></thead><tbody>" + rows + "</tbody></table></div></section>"
    }

    /// The row header of a day: its date, and `so far` for today. (A `th` first in each row of a
    /// simple table is its row header without `scope`, which 365 rows need not repeat.)
    func dayHeader(_ day: LocalDay) -> String {
        let partial = page.summary[day]?.isPartial ?? (day >= page.today)
        return "<th>\(day.text)" + (partial ? " <span class=\"tag\">so far</span>" : "") + "</th>"
    }

    func dayTable() -> String {
        var rows = ""
        for day in page.days.reversed() {
            let row = page.summary[day]
            rows += (row?.isPartial == true ? "<tr class=\"partial\">" : "<tr>") + dayHeader(day)
            for metric in Metric.all {
                if let value = row.flatMap(metric.value) {
                    rows += "<td>\(metric.text(value))</td>"
                } else if metric.total == "sleep_min", let inBed = inBedOnly(day) {
                    rows += "<td class=\"gap\">\(Self.inBedText(inBed))</td>"
                } else {
                    rows += Self.noData
                }
            }
            if let count = row?.workouts, count > 0 {
                rows += "<td>\(Format.number(count)) (\(Format.minutes((row?.workoutSeconds ?? 0) / 60)))</td>"
            } else {
                rows += Self.noData
            }
            rows += "</tr>"
        }
        return Self.table(id: "days", title: "Day by day", intro: "<p class=\"note\">Totals are one source's (the winner's, below), "
                          + "never a sum of devices; heart rate and HRV are the day's mean, weight the day's last weighing.</p>",
                          head: ["Day"] + Metric.all.map { "\($0.title) (\($0.unit))" } + ["Workouts"], rows: rows)
    }

    func sourcesTable() -> String {
        var rows = ""
        for day in page.days.reversed() {
            guard let winners = page.winners[day] else { continue }
            rows += "<tr>" + dayHeader(day)
            for metric in Metric.totals {
                guard let total = metric.total, let winner = winners[total] else { rows += Self.noData; continue }
                rows += "<td><b>\(sources[winner.source])</b>"
                for other in winner.alternatives {
                    // A source of the night with time in bed alone recorded no sleep, never "0 min".
                    let counted = total == "sleep_min" && other.value == 0 ? "in bed only, no sleep recorded"
                        : metric.text(metric.fromTotal(other.value))
                    rows += " · \(sources[other.source]) \(counted)"
                }
                rows += "</td>"
            }
            rows += "</tr>"
        }
        let intro = "<p class=\"note\">Each day's value is one source's total: the source with the largest, in bold. "
            + "The others are listed with what they counted; they are never added up.</p>" + sources.legend()
        return Self.table(id: "sources", title: "Which source counted", intro: intro,
                          head: ["Day"] + Metric.totals.map(\.title), rows: rows)
    }

    /// The time in bed of a night no source recorded a minute asleep, if `day` ended one.
    func inBedOnly(_ day: LocalDay) -> Double? {
        guard let night = page.sleep[day], night.asleep == nil else { return nil }
        return night.inBed
    }

    /// How a night with only time in bed reads: never as 0 minutes asleep.
    static func inBedText(_ minutes: Double) -> String {
        "\(Format.minutes(minutes)) in bed, no sleep recorded"
    }

    func sleepTable() -> String {
        var rows = ""
        for day in page.days.reversed() {
            guard let night = page.sleep[day] else { continue }
            rows += "<tr>" + dayHeader(day)
            if let asleep = night.asleep {
                for minutes in [asleep, night.core, night.deep, night.rem, night.unspecified] {
                    rows += "<td>\(Format.minutes(minutes))</td>"
                }
            } else {
                rows += "<td class=\"gap\">no sleep recorded</td>" + String(repeating: "<td class=\"gap\">–</td>", count: 4)
            }
            rows += "<td>\(Format.minutes(night.awake))</td><td>\(Format.minutes(night.inBed))</td>"
            rows += "<td>\(sources[night.source])</td></tr>"
        }
        return Self.table(id: "sleep", title: "Sleep stages", intro: "<p class=\"note\">The night that ended on the day, "
                          + "from the source with the most sleep. In bed and awake are not sleep: a night with only time in bed "
                          + "(a phone alone records no sleep) shows its time in bed and stays out of the sleep average.</p>",
                          head: ["Day", "Asleep", "Core", "Deep", "REM", "Unspecified", "Awake", "In bed", "Source"], rows: rows)
    }

    func healthKitTable() -> String {
        let metrics = Metric.totals.filter { $0.total != "sleep_min" }
        var rows = ""
        for day in page.days.reversed() {
            guard let checks = page.healthKit[day] else { continue }
            rows += "<tr>" + dayHeader(day)
            for metric in metrics {
                guard let total = metric.total, let check = checks[total] else { rows += Self.noData; continue }
                let ours = metric.fromTotal(check.ours), theirs = metric.fromTotal(check.healthKit)
                rows += "<td>\(metric.text(ours)) · HealthKit \(metric.text(theirs))</td>"
            }
            rows += "</tr>"
        }
        guard !rows.isEmpty else { return "" }
        return Self.table(id: "healthkit", title: "HealthKit's own totals beside ours",
                          intro: "<p class=\"note\">Where an app sent HealthKit's merged daily statistics (Stridee wellness): "
                            + "ours first, then HealthKit's. A gap between them points at a source the warehouse lacks.</p>",
                          head: ["Day"] + metrics.map(\.title), rows: rows)
    }
}
