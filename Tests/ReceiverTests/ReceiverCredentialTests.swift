import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

@Suite("Receiver credentials")
struct ReceiverCredentialTests {
    @Test("with a token minted, a missing or wrong credential gets 401 and stores nothing; the whole value is compared")
    func wrongCredentials() throws {
        try withReceiver { receiver, db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            let token = try TokenStore(pool: pool).create(person: "alice", label: nil).token
            let body = try Bodies.fixture("contract-example.json")
            let wrong: [[(name: String, value: String)]] = [
                [], [("Authorization", token)], [("Authorization", "bearer \(token)")],
                [("Authorization", "Bearer \(token)x")], [("Authorization", "Bearer  \(token)")], [("Authorization", "Bearer")],
                [("X-Token", token)],
                // Sent twice, the credential is neither value, in either order.
                [("Authorization", "Bearer \(token)"), ("Authorization", "Bearer wrong")],
                [("Authorization", "Bearer wrong"), ("Authorization", "Bearer \(token)")],
            ]
            for headers in wrong {
                #expect(try receiver.post(body, headers: headers).status == 401, "\(headers.map(\.value))")
            }
            // The probe checks the credential too, so Test connection shows a wrong one.
            #expect(try receiver.post(Bodies.fixture("probe.json")).status == 401)
            #expect(try counts(db, person: "alice").deliveries == 0)
            #expect(try counts(db, person: "default").deliveries == 0)
            let right = try receiver.post(body, headers: [("Authorization", "Bearer \(token)")])
            #expect(right.status == 200)
            #expect(try counts(db, person: "alice").samples == 3)
            // Spaces and tabs around a field's value are not part of it (RFC 9110 §5.5).
            for padded in [" Bearer \(token) ", "Bearer \(token)\t", "\tBearer \(token)  "] {
                #expect(try receiver.post(body, headers: [("Authorization", padded)]).status == 200, "\(Array(padded.utf8.prefix(2)))")
            }
        }
    }

    @Test("a revoked token gets 401, and revoking the last token does not open the receiver")
    func revoked() throws {
        try withReceiver { receiver, db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            let tokens = TokenStore(pool: pool)
            let (token, id) = try tokens.create(person: "alice", label: nil)
            #expect(try tokens.revoke(id: id))
            let body = try Bodies.fixture("contract-example.json")
            #expect(try receiver.post(body, headers: [("Authorization", "Bearer \(token)")]).status == 401)
            #expect(try receiver.post(body).status == 401)
            #expect(try counts(db).deliveries == 0)
        }
    }

    @Test("with another header name, its whole value is the token")
    func customHeader() throws {
        try withReceiver(authHeader: "X-Health-Token") { receiver, db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            let token = try TokenStore(pool: pool).create(person: "bob", label: nil).token
            let body = try Bodies.fixture("contract-example.json")
            #expect(try receiver.post(body, headers: [("X-Health-Token", "Bearer \(token)")]).status == 401)
            #expect(try receiver.post(body, headers: [("Authorization", "Bearer \(token)")]).status == 401)
            #expect(try receiver.post(body, headers: [("x-health-token", token)]).status == 200)
            #expect(try receiver.post(body, headers: [("X-Health-Token", token + " ")]).status == 200)
            #expect(try receiver.post(body, headers: [("X-Health-Token", token + "x")]).status == 401)
            #expect(try counts(db, person: "bob").samples == 3)
        }
    }

    @Test("a second person's token can never overwrite the first person's uuid")
    func personIsolation() throws {
        try withReceiver { receiver, db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            let alice = try TokenStore(pool: pool).create(person: "alice", label: nil).token
            let mallory = try TokenStore(pool: pool).create(person: "mallory", label: nil).token
            let uuid = "A0000000-0000-4000-8000-000000000001"
            let original = Bodies.json(samples: [Bodies.quantity(uuid: uuid, start: "2026-08-21T10:00:00.000+02:00", value: "100")])
            let forged = Bodies.json(samples: [Bodies.quantity(uuid: uuid, start: "2026-08-21T10:00:00.000+02:00", value: "999999")])
            #expect(try receiver.post(original, headers: [("Authorization", "Bearer \(alice)")]).status == 200)
            let answer = try receiver.post(forged, headers: [("Authorization", "Bearer \(mallory)")])
            #expect(answer.status == 200)
            #expect(json(answer)["inserted"] as? Int == 1)
            #expect(try db.scalar("SELECT value FROM health_store.samples WHERE person = 'alice'", as: Double.self) == 100)
            #expect(try db.scalar("SELECT value FROM health_store.samples WHERE person = 'mallory'", as: Double.self) == 999999)
        }
    }
}
