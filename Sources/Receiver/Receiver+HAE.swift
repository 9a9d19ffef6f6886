import Hashing
import HealthPayload
import HTTPServer
import Warehouse

/// Health Auto Export's REST API automation (CONTRACT.md §9, docs/health-auto-export.md):
/// `POST /hae`, routed before healthd's any-path rule, with healthd's credential rules
/// (`--auth-header`) and its own body limit (`--max-hae-body`).
extension Receiver {
    /// The path the app's automation posts to.
    public static let haePath = "/hae"

    /// What the head of a request to `/hae` leads to: `405` for another method, `401`, `415`
    /// for anything but JSON, or reading its body.
    func decideHAE(_ head: HTTPRequestHead, method: String, person: inout String?) throws -> HeadOutcome {
        if let refusal = try refusePOST(head, method: method, person: &person) { return .answer(refusal) }
        let contentType = head.headers["Content-Type"]
        guard Self.format(of: contentType) == .json else {
            return .answer(.unsupportedMediaType(contentType, accepted: "application/json"))
        }
        return .readHAEBody(person: person!, aggregation: head.headers["automation-aggregation"])
    }

    /// Decodes and stores a Health Auto Export body for `person`, in one transaction.
    func receiveHAE(_ body: [UInt8], person: String, aggregation: String?, timing: inout PhaseTiming) -> ReceiverOutcome {
        let decoded = timing.measure(\.decodeMilliseconds) {
            Result { () throws(StrideePayloadError) in try HAEDecoder.decode(body, aggregation: aggregation) }
        }
        let haeBody: HAEBody
        switch decoded {
        case .success(let value): haeBody = value
        case .failure(let error): return .haeRejected(error)
        }
        do {
            let counts = try timing.measure(\.storeMilliseconds) {
                try HAEStore.store(haeBody, person: person, bodySHA256: SHA256.hash(body), holdingCredential: true, pool: pool)
            }
            let s = counts.samples
            metrics?.stored(.hae, person: person, [.inserted: s.inserted, .duplicate: s.duplicates + s.matched,
                                                   .replaced: s.replaced, .quarantined: s.quarantined])
            return .haeStored(counts)
        } catch {
            return .storeFailed(error)
        }
    }
}
