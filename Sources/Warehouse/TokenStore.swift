import Foundation
import Hashing
import Postgres

/// Receiver credentials: minted here, shown once, stored only as their SHA-256.
public struct TokenStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// A token as listed: never the token itself, which is not kept.
    public struct Listing: Sendable, Equatable {
        public var id: Int64
        public var person: String
        public var label: String?
        public var createdAt: Date
        public var lastUsedAt: Date?
        public var revokedAt: Date?
        /// When it stops working; nil for a token that never expires.
        public var expiresAt: Date?
    }

    /// Mints a token for `person` and returns it; only its SHA-256 is stored. With `expiresIn`
    /// (seconds) it stops working that long from now (`token create --expires-in 1h`).
    public func create(person: String, label: String?, expiresIn: Double? = nil) throws -> (token: String, id: Int64) {
        try PersonName.validate(person)
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator() // getrandom(2): fit for secrets
        for i in bytes.indices { bytes[i] = generator.next() }
        let token = "hw_" + Self.base64URL(bytes)
        let id: Int64 = try pool.withConnection { conn in
            try conn.query("""
                INSERT INTO health_store.tokens (person, label, token_sha256, expires_at)
                VALUES ($1, $2, $3, now() + make_interval(secs => $4::float8))
                RETURNING token_id
                """, [person, label, PostgresBytea(SHA256.hash(Array(token.utf8))), expiresIn]).first!.decode(0)
        }
        return (token, id)
    }

    /// Every token, newest first.
    public func list() throws -> [Listing] {
        try pool.withConnection { conn in
            try conn.query("""
                SELECT token_id, person, label, created_at, last_used_at, revoked_at, expires_at
                FROM health_store.tokens ORDER BY created_at DESC, token_id DESC
                """).map { row in
                Listing(id: try row.decode(0), person: try row.decode(1), label: try row.decodeIfPresent(2),
                        createdAt: try row.decode(3), lastUsedAt: try row.decodeIfPresent(4), revokedAt: try row.decodeIfPresent(5),
                        expiresAt: try row.decodeIfPresent(6))
            }
        }
    }

    /// Revokes a token by id; returns false when no live token has that id.
    public func revoke(id: Int64) throws -> Bool {
        try pool.withConnection { conn in
            try conn.query("UPDATE health_store.tokens SET revoked_at = now() WHERE token_id = $1 AND revoked_at IS NULL", [id]).affectedRows == 1
        }
    }

    /// True once any token was minted, even if since revoked: from then on every request
    /// needs a live one. (Revoking the last token, or deleting the last person who held
    /// tokens, must not open the receiver to anyone: `health_store.tokens_required()`.)
    public func anyMinted() throws -> Bool {
        try pool.withConnection { conn in
            try conn.query("SELECT health_store.tokens_required()").first!.decode(0)
        }
    }

    /// The person a live token (not revoked, not expired) belongs to, or nil. Records when it
    /// was last used (at most once a minute, to keep writes off the hot path).
    public func person(forToken token: String) throws -> String? {
        let digest = PostgresBytea(SHA256.hash(Array(token.utf8)))
        return try pool.withConnection { conn in
            try conn.query("""
                WITH hit AS (
                  SELECT person, token_id, last_used_at FROM health_store.tokens
                  WHERE token_sha256 = $1 AND health_store.token_is_live(revoked_at, expires_at)
                ), touched AS (
                  UPDATE health_store.tokens t SET last_used_at = now()
                  FROM hit WHERE t.person = hit.person AND t.token_id = hit.token_id
                    AND (hit.last_used_at IS NULL OR hit.last_used_at < now() - interval '1 minute')
                )
                SELECT person FROM hit
                """, [digest]).first?.decode(0)
        }
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// The rule for person names: what a token decides and every key starts with.
public enum PersonName {
    /// The person every batch belongs to while no token exists.
    public static let defaultPerson = "default"

    /// 1–64 characters of ASCII letters, digits, `.`, `_`, `@` and `-`.
    public static func validate(_ name: String) throws {
        let allowed = name.unicodeScalars.allSatisfy {
            ($0.value < 128 && (CharacterSet.alphanumerics.contains($0))) || "._@-".unicodeScalars.contains($0)
        }
        guard !name.isEmpty, name.count <= 64, allowed else {
            throw WarehouseError.invalidPerson(name)
        }
    }
}

/// Errors of the warehouse's own rules (not the database's).
public enum WarehouseError: Error, CustomStringConvertible, Equatable {
    case invalidPerson(String)

    public var description: String {
        switch self {
        case .invalidPerson(let name):
            return "person name \"\(name.prefix(80))\" is not allowed: use 1-64 ASCII letters (a-z, A-Z), digits, '.', '_', '@' or '-'"
        }
    }
}
