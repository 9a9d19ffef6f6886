import Foundation
import Hashing
import Postgres

/// What the page's sign-in learns of a token, and the cheap check its sessions make on
/// every request (docs/ui.md).
extension TokenStore {
    /// A token as a sign-in finds it.
    public enum Lookup: Sendable, Equatable {
        /// Live: a session may be opened for `person`, ending by `expiresAt` at the latest.
        case live(id: Int64, person: String, expiresAt: Date?)
        /// Known, but past its `--expires-in`.
        case expired
        /// Known, but revoked.
        case revoked
        /// Not a token this warehouse minted.
        case unknown
    }

    /// Looks `token` up by its SHA-256, recording its use when it is live (as `person(forToken:)`
    /// does: at most once a minute, so a client checked on every request writes rarely).
    public func lookup(token: String) throws -> Lookup {
        let digest = PostgresBytea(SHA256.hash(Array(token.utf8)))
        return try pool.withConnection { conn in
            guard let row = try conn.query("""
                WITH hit AS (
                  SELECT person, token_id, revoked_at IS NOT NULL AS revoked,
                         expires_at IS NOT NULL AND expires_at <= now() AS expired, expires_at, last_used_at
                  FROM health_store.tokens WHERE token_sha256 = $1
                ), touched AS (
                  UPDATE health_store.tokens t SET last_used_at = now()
                  FROM hit WHERE t.person = hit.person AND t.token_id = hit.token_id AND NOT hit.revoked AND NOT hit.expired
                    AND (hit.last_used_at IS NULL OR hit.last_used_at < now() - interval '1 minute')
                )
                SELECT token_id, person, revoked, expired, expires_at FROM hit
                """, [digest]).first else { return .unknown }
            if try row.decode(2, as: Bool.self) { return .revoked }
            if try row.decode(3, as: Bool.self) { return .expired }
            return .live(id: try row.decode(0), person: try row.decode(1), expiresAt: try row.decodeIfPresent(4))
        }
    }

    /// Whether token `id` of `person` is still live (not revoked, not expired): one primary-key
    /// probe, made on every request a session makes.
    public func isLive(id: Int64, person: String) throws -> Bool {
        try pool.withConnection { conn in
            try conn.query("""
                SELECT EXISTS (SELECT 1 FROM health_store.tokens WHERE person = $1 AND token_id = $2
                               AND health_store.token_is_live(revoked_at, expires_at))
                """, [person, id]).first!.decode(0)
        }
    }
}
