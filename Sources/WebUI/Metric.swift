/// A daily value the days page charts and tabulates: where it comes from in
/// `health.daily_summary`, how it is drawn, and how one value reads with its unit.
struct Metric: Sendable {
    /// The `health.daily_totals` metric whose winner the sources table names; nil for readings and body values.
    var total: String?
    var title: String
    /// The unit as the chart's caption states it.
    var unit: String
    var style: SVGChart.Style
    /// The day's value in `unit`, from its summary row; nil when that day had none.
    var value: @Sendable (DaySummary) -> Double?
    /// One value in words with its unit, e.g. `6.12 km`.
    var text: @Sendable (Double) -> String
    /// A `health.daily_totals` value (in the view's unit) in the unit `text` takes.
    var fromTotal: @Sendable (Double) -> Double = { $0 }
    /// What the chart draws per unit of `value` (sleep: minutes drawn as hours).
    var chartFactor = 1.0

    /// What the page shows, in order.
    static let all: [Metric] = [
        Metric(total: "steps", title: "Steps", unit: "steps", style: .bars, value: { $0.steps },
               text: { Format.with($0, unit: "steps") }),
        Metric(total: "distance_m", title: "Distance", unit: "km", style: .bars, value: { $0.distanceMeters.map { $0 / 1000 } },
               text: { Format.with($0, decimals: 2, unit: "km") }, fromTotal: { $0 / 1000 }),
        Metric(total: "active_energy_kcal", title: "Active energy", unit: "kcal", style: .bars, value: { $0.activeEnergyKcal },
               text: { Format.with($0, unit: "kcal") }),
        Metric(total: "exercise_min", title: "Exercise", unit: "min", style: .bars, value: { $0.exerciseMinutes },
               text: { Format.with($0, unit: "min") }),
        Metric(total: "sleep_min", title: "Sleep", unit: "hours asleep", style: .bars, value: { $0.sleepMinutes },
               text: { Format.minutes($0) }, chartFactor: 1.0 / 60),
        Metric(total: nil, title: "Resting heart rate", unit: "bpm", style: .line, value: { $0.restingHeartRate },
               text: { Format.with($0, unit: "bpm") }),
        Metric(total: nil, title: "Heart rate variability (SDNN)", unit: "ms", style: .line, value: { $0.hrvMilliseconds },
               text: { Format.with($0, unit: "ms") }),
        Metric(total: nil, title: "Weight", unit: "kg", style: .line, value: { $0.bodyMassKg },
               text: { Format.with($0, decimals: 1, unit: "kg") }),
    ]

    /// The metrics that have a per-source winner, in the order the page shows them.
    static var totals: [Metric] { all.filter { $0.total != nil } }
}
