import Civil

/// A summarized night of `sleep_analysis`: `{date, totalSleep | asleep, core, deep, rem, awake,
/// inBed, sleepStart, sleepEnd, inBedStart, inBedEnd, sleepSource}`, amounts in hours.
///
/// The night becomes one sleep sample per stage it gives (0 hours: a span of no length), of source `sleepSource` (else the
/// point's `source`, else `Health Auto Export`), each ending at the night's end and starting
/// that stage's total before it. The samples' times say how long, not when: the app sends no
/// more. Ending together, they share the night's day (sleep belongs to the day of its end), and
/// `daily_sleep` weighs the night against other sources by minutes asleep like any source's.
extension HAEWalker {
    mutating func night(_ plan: MetricPlan, _ path: String, _ range: Range<Int>) throws(StrideePayloadError) -> [HAESample] {
        let dateIndex = slots[PointKey.date.rawValue]
        guard dateIndex >= 0 else { throw StrideePayloadError(path: path + ".date", "missing") }
        let dateText = try reader.string(tape[dateIndex], path + ".date")
        guard let (y, m, d) = CivilDate.parts(String(dateText.prefix(10))), let day = CivilDate(year: y, month: m, day: d) else {
            throw StrideePayloadError(path: path + ".date", "\(reader.literal(tape[dateIndex])) is not a date like 2024-02-06")
        }
        let end = try nightEnd(day, path)

        // Amounts in minutes; the asleep total is totalSleep, else asleep (which, below the
        // staged minutes, is the unstaged part beside them).
        var minutes: [PointKey: Double] = [:]
        for key in [PointKey.totalSleep, .asleep, .core, .deep, .rem, .awake, .inBed] {
            guard let hours = try number(key, path, required: false) else { continue }
            guard hours >= 0 else { throw StrideePayloadError(path: "\(path).\(key)", "\(hours) is negative") }
            minutes[key] = plan.conversion.apply(hours)
        }
        guard !minutes.isEmpty else { throw StrideePayloadError(path: path, "none of totalSleep, asleep, core, deep, rem, awake, inBed") }
        let staged = (minutes[.core] ?? 0) + (minutes[.deep] ?? 0) + (minutes[.rem] ?? 0)
        let total = minutes[.totalSleep] ?? minutes[.asleep].map { $0 >= staged ? $0 : $0 + staged }
        // Every stage the night gives, at 0 minutes too (a span of no length): re-sent as the
        // app stages the night, each stage replaces its earlier copy, so one now at 0 (the
        // unstaged part once core, deep and REM are known) no longer counts what it held.
        let stages: [(value: Int, minutes: Double?)] = [
            (0, minutes[.inBed]), (1, total.map { max(0, $0 - staged) }), (2, minutes[.awake]),
            (3, minutes[.core]), (4, minutes[.deep]), (5, minutes[.rem]),
        ]

        let consumed = PointKey.mask([.date, .totalSleep, .asleep, .core, .deep, .rem, .awake, .inBed, .sleepEnd, .inBedEnd,
                                      .sleepSource, .source])
        let spec = self.spec(HAEMetric.sleepType, "sleep", "category", nil, consumed)
        let source = try self.source(slots[PointKey.sleepSource.rawValue] >= 0 ? .sleepSource : .source, path)
        let keep = try extras(consumed, range, path)
        var made: [HAESample] = []
        for case let (value, minutes?) in stages {
            let micros = (minutes * 60_000).rounded() * 1000
            guard micros < 1e15 else { continue }
            let start = end.microsecondsSinceEpoch - Int64(micros)
            if let reason = Plausibility.instantReason(microseconds: start, latest: reader.latest) {
                throw StrideePayloadError(path: path, "the night's start \(reason)")
            }
            let name = HAEMetric.stages[value].name
            let uuid = identity([plan.name, name], source, [Array(dateText.utf8)])
            made.append(HAESample(uuid: uuid, start: start, end: end.microsecondsSinceEpoch, startOffset: end.offsetSeconds,
                                  endOffset: end.offsetSeconds, value: Double(value), low: .nan, high: .nan, spec: spec,
                                  bucketed: true, source: source, extrasStart: 0, extrasEnd: 0).keeping(keep))
        }
        return made
    }

    /// When a night ends: `sleepEnd`, else `inBedEnd`, when it falls on the night's date as
    /// written; else noon of that date in their offset (or UTC), which is that date in any
    /// time zone within twelve hours of it.
    func nightEnd(_ day: CivilDate, _ path: String) throws(StrideePayloadError) -> Timestamp {
        var offset: Int32?
        for key in [PointKey.sleepEnd, .inBedEnd] where slots[key.rawValue] >= 0 && tape[slots[key.rawValue]].kind != .null {
            let (stamp, _) = try instant(key, path)
            if stamp.localDate == day.description { return stamp }
            offset = offset ?? stamp.offsetSeconds
        }
        let seconds = Int64(day.daysSinceEpoch) * 86_400 + 43_200 - Int64(offset ?? 0)
        if let reason = Plausibility.instantReason(milliseconds: seconds * 1000, latest: reader.latest) {
            throw StrideePayloadError(path: path + ".date", "\(day) \(reason)")
        }
        return Timestamp(microsecondsSinceEpoch: seconds * 1_000_000, offsetSeconds: offset ?? 0)
    }
}
