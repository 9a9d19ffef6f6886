import Foundation
import HealthPayload

/// One of the Stridee endpoints (docs/stridee.md), found by path before the healthd rule
/// ("`POST` to any path is a batch"): a path this table does not hold stays healthd's.
struct StrideeRoute: Equatable, Sendable {
    /// What the path addresses.
    enum Endpoint: Equatable, Sendable {
        /// One `healthkit.v1` workout per `POST`.
        case workouts
        /// A `healthkit.wellness.v1` batch per `POST`.
        case wellness
        /// The person's connection: `PUT`, `GET`, `DELETE`.
        case connection
    }

    /// What the path addresses.
    var endpoint: Endpoint
    /// The `{id}` of a relay path (`/v1/accounts/{id}/…`), percent-decoded; nil on a device
    /// path. A relay push must name the token's person, and connects them.
    var account: String?

    /// The routes, by path; `{id}` is one non-empty path segment.
    static let table: [(pattern: String, endpoint: Endpoint)] = [
        ("/v1/device/apple/workouts", .workouts),
        ("/v1/accounts/{id}/apple/workouts", .workouts),
        ("/v1/device/apple/wellness", .wellness),
        ("/v1/accounts/{id}/apple/wellness", .wellness),
        ("/v1/device/connections/apple", .connection),
    ]

    /// The route of a request path (as sent, without the query string), or nil for any other path.
    static func match(_ path: String) -> StrideeRoute? {
        // Cheap refusal for every healthd batch, whatever its path.
        guard path.hasPrefix("/v1/") else { return nil }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        for (pattern, endpoint) in table {
            let wanted = pattern.split(separator: "/", omittingEmptySubsequences: false)
            guard wanted.count == segments.count else { continue }
            var account: String?
            var matches = true
            for (want, got) in zip(wanted, segments) {
                if want == "{id}" {
                    guard !got.isEmpty else { matches = false; break }
                    // A segment that is not valid percent-encoding names nobody: never the token's person.
                    account = String(got).removingPercentEncoding ?? ""
                } else if want != got {
                    matches = false
                    break
                }
            }
            if matches { return StrideeRoute(endpoint: endpoint, account: account) }
        }
        return nil
    }

    /// The methods the path answers, for `405` and its `Allow`.
    var allowedMethods: [String] {
        endpoint == .connection ? ["GET", "PUT", "DELETE"] : ["POST"]
    }

    /// The largest body the path reads (replacing `--max-body` here: docs/stridee.md):
    /// 30 MiB for a workout, 10 MiB for a wellness batch; a connection request carries nothing
    /// the receiver reads.
    var maxBodyBytes: Int {
        switch endpoint {
        case .workouts: return StrideeDecoder.maxWorkoutBodyBytes
        case .wellness: return StrideeDecoder.maxWellnessBodyBytes
        case .connection: return 64 * 1024
        }
    }
}
