/// The GPS route of a `healthkit.v1` workout, in columns ready to be bound as PostgreSQL
/// `timestamptz[]` and `float8[]` parameters (a `nil` element is SQL NULL).
///
/// Sorted by time (stably). Every column has one element per point; `latitudes` are in
/// [−90, 90], `longitudes` in [−180, 180], and every number is finite with |x| ≤ 1e15.
public struct WorkoutRoute: Sendable, Equatable {
    /// Each point's `t`, microseconds since the Unix epoch.
    public var times: [Int64] = []
    /// Degrees.
    public var latitudes: [Double] = []
    /// Degrees.
    public var longitudes: [Double] = []
    /// Metres above sea level, when the point has one.
    public var altitudes: [Double?] = []
    /// Metres per second.
    public var speeds: [Double?] = []
    /// Degrees from true north.
    public var courses: [Double?] = []
    /// Metres.
    public var horizontalAccuracies: [Double?] = []
    /// Metres.
    public var verticalAccuracies: [Double?] = []

    /// An empty route (an indoor workout).
    public init() {}

    /// How many points the route holds.
    public var count: Int { times.count }
    /// True for a workout without a route.
    public var isEmpty: Bool { times.isEmpty }

    /// Adds `other`'s points after these (call `sortByTime` when done).
    public mutating func append(_ other: WorkoutRoute) {
        times += other.times
        latitudes += other.latitudes
        longitudes += other.longitudes
        altitudes += other.altitudes
        speeds += other.speeds
        courses += other.courses
        horizontalAccuracies += other.horizontalAccuracies
        verticalAccuracies += other.verticalAccuracies
    }

    /// Makes room for `count` points in every column.
    mutating func reserveCapacity(_ count: Int) {
        times.reserveCapacity(count)
        latitudes.reserveCapacity(count)
        longitudes.reserveCapacity(count)
        altitudes.reserveCapacity(count)
        speeds.reserveCapacity(count)
        courses.reserveCapacity(count)
        horizontalAccuracies.reserveCapacity(count)
        verticalAccuracies.reserveCapacity(count)
    }

    /// Reorders every column by `order` (indexes into the current columns).
    mutating func permute(_ order: [Int]) {
        times = order.map { times[$0] }
        latitudes = order.map { latitudes[$0] }
        longitudes = order.map { longitudes[$0] }
        altitudes = order.map { altitudes[$0] }
        speeds = order.map { speeds[$0] }
        courses = order.map { courses[$0] }
        horizontalAccuracies = order.map { horizontalAccuracies[$0] }
        verticalAccuracies = order.map { verticalAccuracies[$0] }
    }
}

extension WorkoutRoute {
    /// Puts the points in time order (stably: points of one instant keep their order).
    public mutating func sortByTime() {
        if let order = StrideeDecoder.stableOrder(times, sorted: zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }) {
            permute(order)
        }
    }
}
