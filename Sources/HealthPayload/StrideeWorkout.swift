/// One decoded `healthkit.v1` workout: its header, its four streams and its route, validated.
///
/// Every number is finite with |x| ≤ 1e15; `headerJSON` casts to PostgreSQL `jsonb` without error.
public struct StrideeWorkout: Sendable, Equatable {
    /// The HKWorkout's UUID, upper case (Apple's text otherwise kept): the workout's identity.
    public var uuid: String
    /// `HKWorkoutActivityType`'s raw value.
    public var activityType: Int32
    /// The discipline.
    public var serverType: StrideeServerType
    /// When the workout started, with the offset written in the body.
    public var startDate: Timestamp
    /// When it ended; never before `startDate`.
    public var endDate: Timestamp
    /// Seconds, paused time excluded; ≥ 0.
    public var duration: Double
    /// The app that wrote the workout into HealthKit.
    public var sourceName: String?
    /// That app's bundle id.
    public var sourceBundleId: String?
    /// The recording device's name or model.
    public var deviceName: String?
    /// Metres, when sent (`null` is absent).
    public var totalDistanceMeters: Double?
    /// Active energy in kilocalories, when sent (`null` is absent).
    public var totalEnergyKcal: Double?
    /// Beats per minute.
    public var heartRate: WorkoutStream
    /// Watts.
    public var runningPower: WorkoutStream
    /// Watts.
    public var cyclingPower: WorkoutStream
    /// Revolutions per minute.
    public var cyclingCadence: WorkoutStream
    /// GPS points.
    public var route: WorkoutRoute
    /// The body's top-level object without `heartRate`, `runningPower`, `cyclingPower`,
    /// `cyclingCadence` and `route`: every other member copied byte for byte, unknown keys too.
    public var headerJSON: String

    /// The workout's day when its person has no time zone: the local date of `startDate` in the
    /// offset written (`Z` = UTC), `YYYY-MM-DD`.
    public var localDate: String { startDate.localDate }

    /// Every stream by its name in the warehouse (`health_store.stream_kinds`), empty ones too:
    /// the one list a new stream kind is added to.
    public var streams: [(name: String, stream: WorkoutStream)] {
        [("heart_rate", heartRate), ("running_power", runningPower), ("cycling_power", cyclingPower),
         ("cycling_cadence", cyclingCadence)]
    }

    /// `streams`, moved out: the workout keeps empty streams, so the caller holds the only copy
    /// of each and can release its columns as it goes (a store encoding a 30 MiB body).
    public mutating func takeStreams() -> [(name: String, stream: WorkoutStream)] {
        defer {
            heartRate = WorkoutStream()
            runningPower = WorkoutStream()
            cyclingPower = WorkoutStream()
            cyclingCadence = WorkoutStream()
        }
        return streams
    }

    /// Creates a workout from its parts.
    public init(
        uuid: String, activityType: Int32, serverType: StrideeServerType, startDate: Timestamp,
        endDate: Timestamp, duration: Double, sourceName: String? = nil, sourceBundleId: String? = nil,
        deviceName: String? = nil, totalDistanceMeters: Double? = nil, totalEnergyKcal: Double? = nil,
        heartRate: WorkoutStream = .init(), runningPower: WorkoutStream = .init(), cyclingPower: WorkoutStream = .init(),
        cyclingCadence: WorkoutStream = .init(), route: WorkoutRoute = .init(), headerJSON: String
    ) {
        self.uuid = uuid
        self.activityType = activityType
        self.serverType = serverType
        self.startDate = startDate
        self.endDate = endDate
        self.duration = duration
        self.sourceName = sourceName
        self.sourceBundleId = sourceBundleId
        self.deviceName = deviceName
        self.totalDistanceMeters = totalDistanceMeters
        self.totalEnergyKcal = totalEnergyKcal
        self.heartRate = heartRate
        self.runningPower = runningPower
        self.cyclingPower = cyclingPower
        self.cyclingCadence = cyclingCadence
        self.route = route
        self.headerJSON = headerJSON
    }
}
