/// The period's workouts: totals first (from `health.daily_summary`), then one row each,
/// newest first, linking to the workout's own page (heart rate over time, the route).
struct WorkoutList {
    let workouts: [WorkoutRow]
    let sources: SourceKeys
    let summary: [LocalDay: DaySummary]
    let days: [LocalDay]

    func render() -> String {
        var out = "<section id=\"workouts\" aria-labelledby=\"workouts-h\"><h2 id=\"workouts-h\">Workouts</h2>"
        let count = days.compactMap { summary[$0]?.workouts }.reduce(0, +)
        let seconds = days.compactMap { summary[$0]?.workoutSeconds }.reduce(0, +)
        let distance = workouts.compactMap(\.distanceMeters).reduce(0, +)
        let energy = workouts.compactMap(\.energyKcal).reduce(0, +)
        guard !workouts.isEmpty else { return out + "<p>No workout in this period.</p></section>" }
        out += "<p id=\"workout-totals\">\(Format.number(count)) workout\(count == 1 ? "" : "s"), \(Format.minutes(seconds / 60)) in all"
            + (distance > 0 ? ", \(Format.with(distance / 1000, decimals: 2, unit: "km"))" : "")
            + (energy > 0 ? ", \(Format.with(energy, unit: "kcal")) active energy" : "") + ".</p>"
        var rows = ""
        for workout in workouts {
            rows += "<tr><th>\(workout.day.text) \(HTML.escape(workout.startTime))</th>"
                + "<td><a href=\"/ui/workouts/\(HTML.escape(workout.uuid))\">\(HTML.escape(workout.name))</a>"
                + (workout.routePoints.map { $0 > 0 ? " <span class=\"tag\">route</span>" : "" } ?? "")
                + (workout.overlapping > 0 ? " <span class=\"tag\">overlaps \(workout.overlapping) other</span>" : "") + "</td>"
                + cell(workout.durationSeconds.map { Format.minutes($0 / 60) })
                + cell(workout.distanceMeters.map { Format.with($0 / 1000, decimals: 2, unit: "km") })
                + cell(workout.energyKcal.map { Format.with($0, unit: "kcal") })
                + cell(Self.heartRate(min: workout.heartRateMin, mean: workout.heartRateMean, max: workout.heartRateMax))
                + "<td>\(sources[workout.source])</td></tr>"
        }
        return out + DaysPage.table(id: "workout-list", title: "Each workout",
                             intro: "<p class=\"note\">Two apps recording one session are both listed, never merged. Sources as in the legend above.</p>",
                             head: ["Start", "Activity", "Duration", "Distance", "Active energy", "Heart rate", "Source"], rows: rows)
            + "</section>"
    }

    private func cell(_ text: String?) -> String {
        text.map { "<td>\($0)</td>" } ?? "<td class=\"gap\">none</td>"
    }

    /// `118 / 142 / 165 bpm (min / mean / max)`, or nil without a heart rate.
    static func heartRate(min: Double?, mean: Double?, max: Double?) -> String? {
        guard let min, let mean, let max else { return nil }
        return "\(Format.number(min)) / \(Format.number(mean)) / \(Format.number(max)) bpm"
    }
}

/// What the views leave out, all time, and why.
struct LeftOutSection {
    let leftOut: LeftOut

    func render() -> String {
        var out = "<section id=\"left-out\" aria-labelledby=\"left-out-h\"><h2 id=\"left-out-h\">Left out, and why</h2><ul>"
        out += item(leftOut.coalesced, none: "No sample was left out as a coalescing.",
                    intro: "Counted once, not twice: combined samples whose parts are also held (coalescings), by type")
        out += item(leftOut.quarantined, none: "No sample was quarantined.",
                    intro: "Quarantined: samples that broke the contract, kept aside with the reason")
        if let deleted = leftOut.deleted {
            out += item(deleted, none: "No sample is marked deleted.", intro: "Deleted in the Health app (found by reconciling an export), by type")
        }
        out += item(leftOut.unknown, none: "Every sample is of a type this version knows.",
                    intro: "Kept but not charted: samples of types this version does not know")
        return out + "</ul></section>"
    }

    private func item(_ counts: [(String, Int)], none: String, intro: String) -> String {
        guard !counts.isEmpty else { return "<li>\(none)</li>" }
        let total = counts.map(\.1).reduce(0, +)
        var out = "<li>\(intro): <strong>\(Format.number(Double(total)))</strong><ul>"
        for (what, count) in counts {
            out += "<li>\(Format.number(Double(count))) · \(HTML.escape(Self.shortType(what)))</li>"
        }
        return out + "</ul></li>"
    }

    /// A type identifier without Apple's prefix (`StepCount`); other text unchanged.
    static func shortType(_ text: String) -> String {
        for prefix in ["HKQuantityTypeIdentifier", "HKCategoryTypeIdentifier"] where text.hasPrefix(prefix) && text.count > prefix.count {
            return String(text.dropFirst(prefix.count))
        }
        return text
    }
}
