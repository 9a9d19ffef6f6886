import DemoData
import Foundation

extension Bodies {
    /// A healthd batch holding one workout sample in the reference's shape, written by DemoData
    /// (its start and end in `start`'s offset): the twin of a Stridee body with the same uuid.
    public static func workout(uuid: String, start: String, end: String, activityType: Int = 37, name: String? = "running",
                               distance: String? = "5000", energy: String? = "320",
                               source: String = "com.apple.health.watch") -> [UInt8] {
        let from = instant(start), to = instant(end)
        let sample = DemoSample(uuid: uuid, type: .workout, source: source, start: from.millisecondsSinceEpoch,
                                end: to.millisecondsSinceEpoch, activityType: activityType, activityName: name,
                                durationSeconds: String((to.millisecondsSinceEpoch - from.millisecondsSinceEpoch) / 1000),
                                distanceMeters: distance, activeEnergyKilocalories: energy, offsetMinutes: from.offsetMinutes)
        return json(samples: [DemoEncoder.object(sample)], exportId: UUID().uuidString)
    }
}
