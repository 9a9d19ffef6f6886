import Hashing
import HealthPayload
import HTTPServer
import Postgres
import Warehouse

/// The Stridee endpoints (docs/stridee.md): the same credential rules and the same outcome
/// mapping as healthd's batches, with `Authorization: Bearer` always.
extension Receiver {
    /// What the head of a request on a Stridee path leads to: `405`, `401`, `403` (a relay
    /// path naming another person), the connection for a `GET`, `409` for a device push of a
    /// person not connected (before a byte of its body is read), or reading its body.
    func decideStridee(_ head: HTTPRequestHead, route: StrideeRoute, method: String,
                       person: inout String?) throws -> HeadOutcome {
        guard route.allowedMethods.contains(method) else { return .answer(.methodNotAllowed(allow: route.allowedMethods)) }
        let who: String
        switch try authenticate(head.headers, bearer: true) {
        case .missingOrWrong: return .answer(.unauthorized)
        case .forwardedWithoutTokens: return .answer(.forwardedWithoutTokens)
        case .person(let found): who = found
        }
        person = who
        if let account = route.account, account != who { return .answer(.wrongAccount) }
        switch route.endpoint {
        case .connection:
            if method == "GET" {
                return .answer(try stridee.connection(person: who).map { .connection($0) } ?? .neverConnected)
            }
        case .workouts, .wellness:
            // The store checks again under the person lock; this spares reading a body that
            // would be refused anyway.
            if route.account == nil, try stridee.connection(person: who)?.isActive != true {
                return .answer(.notConnected)
            }
        }
        return .readStrideeBody(person: who, route: route, method: method)
    }

    /// Decodes and stores a Stridee body for `person`, or connects or disconnects them.
    func receiveStridee(_ body: [UInt8], person: String, route: StrideeRoute, method: String,
                        timing: inout PhaseTiming) -> ReceiverOutcome {
        // A relay push is the person's backend sending their data: that is the consent.
        let connect = route.account != nil
        do {
            switch route.endpoint {
            case .workouts:
                let decoded = timing.measure(\.decodeMilliseconds) {
                    Result { () throws(StrideePayloadError) in try StrideeDecoder.decodeWorkout(body) }
                }
                var workout: StrideeWorkout?
                switch consume decoded {
                case .success(let value): workout = value
                case .failure(let error): return .strideeRejected(error)
                }
                let uuid = workout!.uuid, digest = SHA256.hash(body)
                // Handed over, not copied: the store releases each decoded column once it is encoded.
                let result = try timing.measure(\.storeMilliseconds) {
                    try stridee.storeWorkout(workout.take()!, person: person, connect: connect, bodySHA256: digest, holdingCredential: true)
                }
                switch result {
                case .stored, .replaced, .unchanged:
                    let outcome: SampleOutcome = result == .stored ? .inserted : result == .replaced ? .replaced : .duplicate
                    metrics?.stored(.strideeWorkout, person: person, [outcome: 1])
                    return .workoutAccepted(uuid: uuid)
                case .notConnected: return .notConnected
                }
            case .wellness:
                let decoded = timing.measure(\.decodeMilliseconds) {
                    Result { () throws(StrideePayloadError) in try StrideeDecoder.decodeWellnessCounting(body) }
                }
                let items: [WellnessItem], sent: Int
                switch decoded {
                case .success(let value): (items, sent) = value
                case .failure(let error): return .strideeRejected(error)
                }
                let (result, stored, inserted) = try timing.measure(\.storeMilliseconds) {
                    try stridee.storeWellness(items, person: person, connect: connect, holdingCredential: true)
                }
                switch result {
                case .stored, .replaced, .unchanged:
                    // Two items of one identity in a body are one: the other is a duplicate.
                    metrics?.stored(.strideeWellness, person: person,
                                    [.inserted: inserted, .replaced: stored - inserted, .duplicate: sent - stored])
                    return .wellnessAccepted(items: stored)
                case .notConnected: return .notConnected
                }
            case .connection:
                let active = method == "PUT"
                let connection = try timing.measure(\.storeMilliseconds) { try stridee.setConnection(person: person, active: active, holdingCredential: true) }
                return active ? .connection(connection!) : .disconnected(connection)
            }
        } catch {
            return .storeFailed(error)
        }
    }
}
