/// One decoded `healthkit.wellness.v1` item: the columns its identity and views need, and the
/// item itself as sent.
///
/// Identity is (person, `kind`, `start`). `json` casts to PostgreSQL `jsonb` without error, and
/// every number of the kind's own fields in it casts to `double precision`.
public struct WellnessItem: Sendable, Equatable {
    /// Which of the nine kinds.
    public var kind: WellnessKind
    /// The user's local day, `YYYY-MM-DD`, a real date.
    public var calendarDate: String
    /// `startTime`, with the offset written.
    public var start: Timestamp
    /// `endTime`, never before `start`, when sent.
    public var end: Timestamp?
    /// The user's UTC offset that day in seconds (|x| ≤ 18 h), when sent.
    public var tzOffsetSeconds: Int32?
    /// `false` while the value can still change; absent (or `null`) is `true`.
    public var isFinal: Bool
    /// The HealthKit sample's UUID when the item is one sample: recorded, not an identity.
    public var id: String?
    /// The item's exact text from the body (its object's bytes), kept whole with unknown fields.
    public var json: String

    /// Creates an item from its parts.
    public init(kind: WellnessKind, calendarDate: String, start: Timestamp, end: Timestamp? = nil,
                tzOffsetSeconds: Int32? = nil, isFinal: Bool = true, id: String? = nil, json: String) {
        self.kind = kind
        self.calendarDate = calendarDate
        self.start = start
        self.end = end
        self.tzOffsetSeconds = tzOffsetSeconds
        self.isFinal = isFinal
        self.id = id
        self.json = json
    }
}
