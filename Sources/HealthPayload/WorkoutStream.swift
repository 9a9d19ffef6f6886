/// One `[{t, v}]` stream of a `healthkit.v1` workout (heart rate, power, cadence), in columns
/// ready to be bound as PostgreSQL `timestamptz[]` and `float8[]` parameters.
///
/// Sorted by time (stably, so samples at the same instant keep their order in the body).
public struct WorkoutStream: Sendable, Equatable {
    /// Each sample's `t`, microseconds since the Unix epoch.
    public var times: [Int64]
    /// Each sample's `v`, in the stream's unit (bpm, W, W, rpm).
    public var values: [Double]

    /// Creates a stream from its columns, which must have the same length.
    public init(times: [Int64] = [], values: [Double] = []) {
        precondition(times.count == values.count, "columns of one stream have one length")
        self.times = times
        self.values = values
    }

    /// How many samples the stream holds.
    public var count: Int { times.count }
    /// True for a workout that has no such stream.
    public var isEmpty: Bool { times.isEmpty }
}
