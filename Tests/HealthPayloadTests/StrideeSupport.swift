import Foundation
import HealthPayload
import Testing

/// The workout a body decodes to, failing the test with the decoder's message otherwise.
func workout(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> StrideeWorkout {
    try workout(Array(text.utf8), sourceLocation: sourceLocation)
}

func workout(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws -> StrideeWorkout {
    do {
        return try StrideeDecoder.decodeWorkout(bytes)
    } catch {
        Issue.record("refused: \(error)", sourceLocation: sourceLocation)
        throw error
    }
}

/// The error a workout body is refused with, or nil when it decodes.
func workoutError(_ text: String) -> StrideePayloadError? {
    do {
        _ = try StrideeDecoder.decodeWorkout(Array(text.utf8))
        return nil
    } catch {
        return error
    }
}

/// The items a wellness body decodes to, failing the test with the decoder's message otherwise.
func wellness(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [WellnessItem] {
    do {
        return try StrideeDecoder.decodeWellness(Array(text.utf8))
    } catch {
        Issue.record("refused: \(error)", sourceLocation: sourceLocation)
        throw error
    }
}

/// The error a wellness body is refused with, or nil when it decodes.
func wellnessError(_ text: String) -> StrideePayloadError? {
    wellnessError(Array(text.utf8))
}

func wellnessError(_ bytes: [UInt8]) -> StrideePayloadError? {
    do {
        _ = try StrideeDecoder.decodeWellness(bytes)
        return nil
    } catch {
        return error
    }
}

/// Microseconds since the epoch of a UTC date and time.
func micros(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0, micro: Int64 = 0) -> Int64 {
    var components = DateComponents()
    (components.year, components.month, components.day) = (year, month, day)
    (components.hour, components.minute, components.second) = (hour, minute, second)
    components.timeZone = TimeZone(identifier: "UTC")
    let date = Calendar(identifier: .gregorian).date(from: components)!
    return Int64(date.timeIntervalSince1970) * 1_000_000 + micro
}
