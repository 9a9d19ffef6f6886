import Foundation
import Hashing
import Synchronization

/// The page's sign-in sessions, held in this process's memory (a restart signs everyone
/// out) and keyed by the SHA-256 of the session id, so the ids a browser holds are not kept
/// here. A session ends when signed out, after `idleSeconds` without a request, after
/// `lifetimeSeconds` in all, when its token's own expiry passes, or (checked by the caller on
/// every request) when its token is revoked or expires. Each person holds at most
/// `perPerson` sessions: signing in once more ends that person's oldest, never anyone else's.
public final class SessionStore: Sendable {
    /// A signed-in browser.
    public struct Session: Sendable, Equatable {
        /// Whose data it shows: the token's person.
        public var person: String
        /// The token it was opened with (`health_store.tokens.token_id`), checked on each request.
        public var tokenID: Int64
        /// When it ends at the latest, whatever happens.
        public var endsAt: Date
        /// The last request it made.
        public var lastSeen: Date
        /// When it was opened.
        public var openedAt: Date
    }

    let idleSeconds: TimeInterval
    let lifetimeSeconds: TimeInterval
    let perPerson: Int
    private let sessions = Mutex<[String: Session]>([:])
    /// Above this many sessions in all, opening one first drops every ended one.
    static let sweepAbove = 1024

    /// - Parameters: `idleSeconds` and `lifetimeSeconds` as above; `perPerson` bounds each
    ///   person's sessions (memory is bounded by it times the persons holding tokens).
    public init(idleSeconds: TimeInterval = 2 * 3600, lifetimeSeconds: TimeInterval = 24 * 3600, perPerson: Int = 100) {
        self.idleSeconds = idleSeconds
        self.lifetimeSeconds = lifetimeSeconds
        self.perPerson = perPerson
    }

    /// Opens a session for `person` and returns its id (32 bytes from getrandom, base64url),
    /// to go in the cookie and nowhere else. `tokenExpiresAt` caps its end.
    public func open(person: String, tokenID: Int64, tokenExpiresAt: Date?, now: Date = Date()) -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator() // getrandom(2)
        for i in bytes.indices { bytes[i] = generator.next() }
        let id = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let end = min(now.addingTimeInterval(lifetimeSeconds), tokenExpiresAt ?? .distantFuture)
        let session = Session(person: person, tokenID: tokenID, endsAt: end, lastSeen: now, openedAt: now)
        sessions.withLock { table in
            if table.count > Self.sweepAbove { table = table.filter { isLive($0.value, now: now) } }
            let own = table.filter { $0.value.person == person }
            if own.count >= perPerson {
                // That person's ended sessions first, then their oldest.
                let ended = own.filter { !isLive($0.value, now: now) }.map(\.key)
                for key in ended { table[key] = nil }
                if own.count - ended.count >= perPerson,
                   let oldest = own.filter({ isLive($0.value, now: now) }).min(by: { $0.value.openedAt < $1.value.openedAt })?.key {
                    table[oldest] = nil
                }
            }
            table[Self.key(id)] = session
        }
        return id
    }

    /// The live session with id `id`, its last use moved to `now`; nil (and forgotten) when
    /// it ended.
    public func session(_ id: String, now: Date = Date()) -> Session? {
        let key = Self.key(id)
        return sessions.withLock { table in
            guard var session = table[key] else { return nil }
            guard isLive(session, now: now) else {
                table[key] = nil
                return nil
            }
            session.lastSeen = now
            table[key] = session
            return session
        }
    }

    /// Ends the session `id` (sign-out, or its token found dead).
    public func end(_ id: String) {
        let key = Self.key(id)
        _ = sessions.withLock { $0.removeValue(forKey: key) }
    }

    /// Sessions held now, ended ones not yet swept included.
    public var count: Int { sessions.withLock { $0.count } }

    static func key(_ id: String) -> String { SHA256.hex(Array(id.utf8)) }

    /// Whether `session` has not ended by `now` (idle too long, or past its end).
    private func isLive(_ session: Session, now: Date) -> Bool {
        now < session.endsAt && now.timeIntervalSince(session.lastSeen) < idleSeconds
    }
}
