import Civil
/// Coalesces some of the simulated history the way Apple Health does: on a chosen day, the
/// phone's fine step and distance samples are resent later as a few combined samples, each
/// with a new uuid and the sum of the samples it covers (the reference, "Delivery
/// semantics": "a sum over that span counts twice" for a receiver that keeps both).
///
/// The choice of days draws from a generator of its own, so turning coalescing on leaves every
/// other sample of a seed as it was.
struct DemoCoalescer {
    /// Share of days coalesced, 0 to 1.
    let share: Double
    /// How long after the day its combined samples reach Health.
    let delayDays: Int
    private var random: SeededRandom

    /// Combined samples group at least this many fine ones.
    static let minimumParts = 2
    /// A day's samples of one type fall into about this many combined ones.
    static let blocksPerDay = 4

    init(seed: UInt64, share: Double, delayDays: Int) {
        self.share = share
        self.delayDays = delayDays
        // Not the simulator's sequence: a stream of its own, decided by the seed.
        random = SeededRandom(seed: seed ^ 0xC0A1_E5CE_D000_0001)
    }

    /// The combined samples for one simulated day (empty on a day not chosen), written
    /// `delayDays` later. Only samples of `source` that start and end on `date` take part.
    mutating func combined(_ samples: [DemoSample], on date: CivilDate, source: String) -> [DemoSample] {
        guard share > 0, random.chance(share) else { return [] }
        let dayStart = CentralEuropeanTime.instant(date, minutes: 0)
        let dayEnd = CentralEuropeanTime.instant(date.adding(days: 1), minutes: 0)
        let written = CentralEuropeanTime.instant(date.adding(days: delayDays), minutes: 180)
        var out: [DemoSample] = []
        for type in [DemoType.steps, DemoType.distance] {
            let fine = samples
                .filter { $0.type == type && $0.source == source && $0.start >= dayStart && $0.end < dayEnd && $0.end > $0.start }
                .sorted { $0.start != $1.start ? $0.start < $1.start : $0.uuid < $1.uuid }
            let target = max(Self.minimumParts, fine.count / Self.blocksPerDay)
            var block: [DemoSample] = []
            var blockEnd = Int64.min
            func close() {
                defer { block = []; blockEnd = .min }
                // A member as long as the whole block would cover the combined sample in turn.
                guard block.count >= Self.minimumParts,
                      !block.contains(where: { $0.start == block[0].start && $0.end == blockEnd }) else { return }
                // Blocks never overlap and every sample lasts, so what lies inside the span
                // is exactly the block: the combined value is its exact sum.
                out.append(DemoSample(uuid: random.uuid(), type: type, source: source, start: block[0].start, end: blockEnd,
                                      written: written, value: DecimalSum.text(block.compactMap(\.value))))
            }
            for sample in fine {
                // A new block starts only where nothing of the current one is still running,
                // so the combined spans never overlap and none covers another.
                if block.count >= target && sample.start >= blockEnd { close() }
                block.append(sample)
                blockEnd = max(blockEnd, sample.end)
            }
            close()
        }
        return out
    }
}

/// Exact sums of numbers written as decimal text (`12`, `0.25`), as a combined sample's value
/// is the exact sum of its parts.
enum DecimalSum {
    /// Decimal places kept (the demo writes at most three).
    static let places = 6

    /// The sum of `values`, written the way `DemoNumber` writes numbers.
    static func text(_ values: [String]) -> String {
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        var total: Int64 = 0
        for value in values {
            let parts = value.split(separator: ".", maxSplits: 1)
            let negative = value.hasPrefix("-")
            let whole = Int64(parts[0].drop(while: { $0 == "-" })) ?? 0
            var fraction: Int64 = 0
            if parts.count == 2 {
                let digits = String(parts[1].prefix(places))
                fraction = (Int64(digits) ?? 0) * Int64(pow10(places - digits.count))
            }
            let scaled = whole * scale + fraction
            total += negative ? -scaled : scaled
        }
        let sign = total < 0 ? "-" : ""
        let magnitude = abs(total)
        var fraction = magnitude % scale
        var digits = places
        if fraction == 0 { return sign + String(magnitude / scale) }
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        return sign + String(magnitude / scale) + "." + CivilDate.digits(Int(fraction), digits)
    }

    private static func pow10(_ n: Int) -> Int {
        var result = 1
        for _ in 0..<n { result *= 10 }
        return result
    }
}
