/// The keys a sample carries always, by its `kind` (reference "The sample object"): a quantity
/// its `value` and `unit`, a category its `value`, a workout its `activityType` and
/// `durationSeconds`; a kind this version does not know, none. Whether its type is in the
/// catalog does not matter.
///
/// One rule for every way in: the healthd decoder (`SampleValidator`) quarantines a sample that
/// lacks one; public so that a way in that builds its samples itself (the Health app's export)
/// holds them to the same rule rather than to a copy of it.
public enum SampleRequirement {
    static let quantityKeys: [SampleKey] = [.value, .unit]
    static let categoryKeys: [SampleKey] = [.value]
    static let workoutKeys: [SampleKey] = [.activityType, .durationSeconds]

    /// The keys a sample of `kind` always carries.
    static func keys(of kind: SampleKind) -> [SampleKey] {
        switch kind {
        case .quantity: quantityKeys
        case .category: categoryKeys
        case .workout: workoutKeys
        case .other: []
        }
    }

    /// `value is missing (kind quantity)`: the quarantine reason of a sample of `kind` (as
    /// written, shortened to a snippet) without `key`.
    static func missingReason(_ key: SampleKey, kind: String) -> String {
        "\(key.name) is missing (kind \(kind))"
    }

    /// The reason a sample of `kind` is quarantined for lacking a key it always carries (the
    /// first, in the reference's order), or nil when `has` says it holds them all.
    /// - Parameter has: whether the sample holds the key so named (`value`, `unit`, …).
    public static func missingReason(kind: String, has: (String) -> Bool) -> String? {
        for key in keys(of: SampleKind(kind)) where !has(key.name) {
            return missingReason(key, kind: PayloadDecoder.snippet(kind))
        }
        return nil
    }
}
