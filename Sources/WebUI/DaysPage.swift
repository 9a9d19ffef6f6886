/// The days page: freshness first, then a chart per metric over the period, the same values
/// day by day as text, which source counted, sleep stages, HealthKit's own totals, workouts,
/// and what was left out. Pure: `PageData` in, HTML out.
struct DaysPage {
    let page: PageData
    let period: Int
    let sources: SourceKeys

    init(_ page: PageData, period: Int) {
        self.page = page
        self.period = period
        var names = page.winners.values.flatMap { $0.values.flatMap { [$0.source] + $0.alternatives.map(\.source) } }
        names += page.sleep.values.map(\.source) + page.workouts.map(\.source)
        sources = SourceKeys(names, shownNames: page.sourceNames)
    }

    /// The whole document.
    func render(signOut: Bool) -> String {
        var main = "<h1>\(HTML.escape(page.person)): the last \(period) days</h1>"
        main += "<p class=\"note\">Days in \(HTML.escape(page.timeZone ?? "each sample's own UTC offset (no time zone set)")); "
            + (page.timeZone == nil ? "workouts at the time the phone wrote, other times in UTC" : "times in \(HTML.escape(page.zoneLabel))")
            + ". Today (\(page.today.text)) is not over yet"
            + (lastDay > page.today ? ", nor is any later day a sample was written on (up to \(lastDay.text))" : "")
            + ": drawn hollow and marked <em>so far</em>.</p>"
        main += freshness() + charts() + dayTable() + sourcesTable() + sleepTable() + healthKitTable()
        main += WorkoutList(workouts: page.workouts, sources: sources, summary: page.summary, days: page.days).render()
        main += LeftOutSection(leftOut: page.leftOut).render()
        return PageLayout.document(title: "Health Warehouse: \(page.person), \(period) days", person: page.person, period: period,
                                   signOut: signOut, main: main)
    }

    func freshness() -> String {
        var out = "<section id=\"freshness\" aria-labelledby=\"freshness-h\"><h2 id=\"freshness-h\">When data last arrived</h2>"
        guard let fresh = page.freshness else {
            return out + "<p class=\"stale\">No healthd batch has arrived for \(HTML.escape(page.person)) yet. Point the healthd app at "
                + "this receiver (docs/setting-up-the-app.md) and export once.</p></section>"
        }
        out += "<dl class=\"facts\"><div><dt>Last batch arrived</dt><dd id=\"last-batch\">\(HTML.escape(fresh.lastReceivedAt)) "
            + "(\(HTML.escape(page.zoneLabel))), \(Format.ago(hours: fresh.hoursSinceLastBatch))</dd></div>"
        out += "<div><dt>Newest sample ends</dt><dd id=\"newest-sample\">"
            + (fresh.newestSampleEndAt.map { HTML.escape($0) + " (" + HTML.escape(page.zoneLabel) + ")" } ?? "no sample held") + "</dd></div></dl>"
        if fresh.isStale {
            out += "<div class=\"stale\" role=\"status\"><p><strong>Nothing for more than \(Format.number(fresh.staleAfterHours, decimals: 0)) hours.</strong></p>"
                + "<p>\(HTML.escape(fresh.hint ?? ""))</p></div>"
        }
        return out + "</section>"
    }

    /// The period's partial and complete days with a value of `metric`.
    func values(_ metric: Metric) -> [(slot: Int, day: LocalDay, value: Double, partial: Bool)] {
        page.days.enumerated().compactMap { slot, day in
            guard let row = page.summary[day], let value = metric.value(row) else { return nil }
            return (slot, day, value, row.isPartial)
        }
    }

    func charts() -> String {
        var out = "<section id=\"charts\" aria-labelledby=\"charts-h\"><h2 id=\"charts-h\">Day by day, charted</h2><div class=\"charts\">"
        let labels = (page.days.first?.text ?? "", page.days[page.days.count / 2].text, lastDay.text)
        for metric in Metric.all {
            let points = values(metric).map { point -> SVGChart.Point in
                var parts = [point.value * metric.chartFactor]
                if metric.total == "sleep_min", let night = page.sleep[point.day] {
                    parts = [night.core, night.deep, night.rem, night.unspecified].map { $0 * metric.chartFactor }
                }
                let label = point.day.text + ": " + metric.text(point.value) + (point.partial ? " (today, so far)" : "")
                return SVGChart.Point(slot: point.slot, values: parts, label: label, partial: point.partial)
            }
            let chart = SVGChart(title: metric.title, unit: metric.unit, style: metric.style, slots: page.days.count,
                                 points: points, slotLabels: labels)
            out += "<figure><figcaption><strong>\(metric.title)</strong> (\(metric.unit)) · \(average(metric))</figcaption>"
                + chart.svg() + (metric.total == "sleep_min" ? Self.sleepKey : "") + "</figure>"
        }
        return out + "</div></section>"
    }

    static let sleepKey = "<p class=\"key\"><span class=\"k s0\"></span>core <span class=\"k s1\"></span>deep "
        + "<span class=\"k s2\"></span>REM <span class=\"k s3\"></span>unspecified</p>"

    /// The last day shown: today, or the newest day holding a sample when that is later.
    var lastDay: LocalDay { page.days.last ?? page.today }

    /// The mean over the complete days with data (today left out; a night with only time in
    /// bed has no value, so it is left out of sleep's), in words.
    func average(_ metric: Metric) -> String {
        let complete = values(metric).filter { !$0.partial }
        guard !complete.isEmpty else { return "no complete day with data" }
        let mean = complete.map(\.value).reduce(0, +) / Double(complete.count)
        return "average \(metric.text(mean)) over \(complete.count) complete day\(complete.count == 1 ? "" : "s") with data"
    }
}
