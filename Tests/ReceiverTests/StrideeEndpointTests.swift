import DemoData
import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// The Stridee endpoints' answers (docs/stridee.md), row by row, over real HTTP, on the device paths and the relay paths.
@Suite("Stridee endpoints")
struct StrideeEndpointTests {
    static let uuid = StrideeBody.uuid

    /// A workout with two heart-rate samples and a two-point route, start written with an offset.
    static let workout = StrideeBody.workout([
        "startDate": #""2026-10-01T08:02:11+02:00""#,
        "heartRate": "[" + StrideeBody.sample("2026-10-01T06:02:16Z", "112") + "," + StrideeBody.sample("2026-10-01T06:03:16.5Z", "130") + "]",
        "route": "[" + StrideeBody.point() + "," + StrideeBody.point(t: "2026-10-01T06:02:13Z", ["lat": "47.3770"]) + "]",
    ])

    /// A daily item, a sleep night and an HRV item.
    static let wellness = StrideeBody.wellness([
        StrideeBody.item("daily", ["steps": "8123", "activeKilocalories": "512.5"]),
        StrideeBody.item("sleep", ["calendarDate": #""2026-10-02""#, "startTime": #""2026-10-01T20:30:00Z""#,
                                   "endTime": #""2026-10-02T04:10:00Z""#,
                                   "stages": #"[{"stage":"core","start":"2026-10-01T20:41:00Z","end":"2026-10-01T22:05:00Z"}]"#]),
        StrideeBody.item("hrv", ["calendarDate": #""2026-10-02""#, "startTime": #""2026-10-02T01:00:00Z""#, "endTime": nil,
                                 "samples": #"[{"t":"2026-10-02T01:00:00Z","v":48.2}]"#]),
    ])

    @Test("a workout push answers 202 {\"status\":\"active\",\"uuid\":…} and stores the workout, its stream and its route",
          arguments: [false, true])
    func workoutAccepted(relay: Bool) throws {
        try withStridee { alice, db throws in
            let paths = StrideePaths(person: alice.person, relay: relay)
            if !relay { #expect(try alice.connect().status == 200) }
            let answer = try alice.send("POST", paths.workouts, Self.workout)
            #expect(answer.status == 202, "\(answer.bodyText)")
            #expect(answer.bodyText == #"{"status":"active","uuid":"5D1E8C1A-2F7B-4E0C-9A43-71C6B0F8D2E4"}"#)
            #expect(answer.header("Content-Type") == "application/json")
            #expect(try strideeCounts(db) == ["workouts": 1, "streams": 1, "routes": 1, "wellness": 0, "samples": 1])
            let row = try #require(db.query("""
                SELECT origin, server_type, activity_name, source, day::text, route_points, heart_rate_max, device_name
                FROM health.workouts WHERE person = 'alice'
                """).first)
            #expect(row[0] == "stridee" && row[1] == "RUNNING" && row[2] == "running" && row[3] == "com.apple.health")
            #expect(row[4] == "2026-10-01" && row[5] == "2" && row[6] == "130" && row[7] == "Apple Watch")
            // A relay push connects the person; a device push needed the connection first.
            let connection = try alice.send("GET", StrideePaths.connection)
            #expect(connection.status == 200)
            #expect(json(connection)["status"] as? String == "active")
        }
    }

    @Test("a wellness push answers 202 {\"items\":n,\"status\":\"active\"} and stores every item", arguments: [false, true])
    func wellnessAccepted(relay: Bool) throws {
        try withStridee { alice, db throws in
            let paths = StrideePaths(person: alice.person, relay: relay)
            if !relay { #expect(try alice.connect().status == 200) }
            let answer = try alice.send("POST", paths.wellness, Self.wellness)
            #expect(answer.status == 202, "\(answer.bodyText)")
            #expect(answer.bodyText == #"{"items":3,"status":"active"}"#)
            #expect(try strideeCounts(db)["wellness"] == 3)
            let kinds = try db.query("SELECT kind FROM health.wellness WHERE person = 'alice' ORDER BY kind").map { $0[0] }
            #expect(kinds == ["daily", "hrv", "sleep"])
        }
    }

    @Test("PUT connects and answers the connection; GET answers the same object; 404 before any connection")
    func connectAndGet() throws {
        try withStridee { alice, db throws in
            let never = try alice.send("GET", StrideePaths.connection)
            #expect(never.status == 404)
            #expect((json(never)["error"] as? String)?.isEmpty == false)
            let put = try alice.connect()
            #expect(put.status == 200)
            let object = json(put)
            #expect(object["provider"] as? String == "apple" && object["status"] as? String == "active")
            let connectedAt = try #require(object["connected_at"] as? String)
            #expect(connectedAt.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil)
            #expect(put.bodyText == #"{"provider":"apple","status":"active","connected_at":"\#(connectedAt)"}"#)
            let get = try alice.send("GET", StrideePaths.connection)
            #expect(get.status == 200 && get.bodyText == put.bodyText)
            // Connecting again keeps the connection as it was.
            #expect(try alice.connect().bodyText == put.bodyText)
            #expect(try db.scalar("SELECT count(*) FROM health_store.connections", as: Int.self) == 1)
        }
    }

    @Test("DELETE answers 200 with status disconnected, device pushes then get 409, and the data stored stays")
    func disconnect() throws {
        try withStridee { alice, db throws in
            #expect(try alice.connect().status == 200)
            #expect(try alice.send("POST", "/v1/device/apple/workouts", Self.workout).status == 202)
            #expect(try alice.send("POST", "/v1/device/apple/wellness", Self.wellness).status == 202)
            let delete = try alice.send("DELETE", StrideePaths.connection)
            #expect(delete.status == 200)
            #expect(json(delete)["status"] as? String == "disconnected" && json(delete)["provider"] as? String == "apple")
            let get = try alice.send("GET", StrideePaths.connection)
            #expect(get.status == 200 && json(get)["status"] as? String == "disconnected")
            let held = try strideeCounts(db)
            #expect(held == ["workouts": 1, "streams": 1, "routes": 1, "wellness": 3, "samples": 1])
            let changed = StrideeBody.workout(["duration": "10.0"])
            #expect(try alice.send("POST", "/v1/device/apple/workouts", changed).status == 409)
            #expect(try alice.send("POST", "/v1/device/apple/wellness", Self.wellness).status == 409)
            #expect(try strideeCounts(db) == held)
            #expect(try db.scalar("SELECT duration_s FROM health_store.stridee_workouts", as: Double.self) == 2789)
            // Connecting again starts a new connection.
            let again = try alice.connect()
            #expect(json(again)["status"] as? String == "active")
            #expect(try alice.send("POST", "/v1/device/apple/workouts", changed).status == 202)
        }
    }

    @Test("DELETE of a connection never made answers 200 disconnected and records nothing: GET stays 404")
    func disconnectNeverConnected() throws {
        try withStridee { alice, db throws in
            let delete = try alice.send("DELETE", StrideePaths.connection)
            #expect(delete.status == 200)
            #expect(delete.bodyText == #"{"provider":"apple","status":"disconnected","connected_at":null}"#)
            #expect(try alice.send("GET", StrideePaths.connection).status == 404)
            #expect(try db.scalar("SELECT count(*) FROM health_store.connections", as: Int.self) == 0)
        }
    }

    @Test("a device push of a person never connected is 409 and stores nothing")
    func notConnected() throws {
        try withStridee { alice, db throws in
            for (path, body) in [("/v1/device/apple/workouts", Self.workout), ("/v1/device/apple/wellness", Self.wellness)] {
                let answer = try alice.send("POST", path, body)
                #expect(answer.status == 409, "\(path)")
                #expect((json(answer)["error"] as? String)?.contains("connections/apple") == true)
            }
            #expect(try strideeCounts(db) == nothingStored)
            #expect(try db.scalar("SELECT count(*) FROM health_store.connections", as: Int.self) == 0, "a refused push connects nobody")
        }
    }

    @Test("a relay path naming another person is 403 and stores nothing, whether or not that person exists")
    func wrongAccount() throws {
        try withStridee { alice, db throws in
            _ = try TokenStore(pool: alice.receiver.pool).create(person: "bob", label: nil)
            for other in ["bob", "nobody", "ALICE", "alice%20", "%zz"] {
                for (kind, body) in [("workouts", Self.workout), ("wellness", Self.wellness)] {
                    let answer = try alice.send("POST", "/v1/accounts/\(other)/apple/\(kind)", body)
                    #expect(answer.status == 403, "\(other) \(kind)")
                }
            }
            #expect(try strideeCounts(db) == nothingStored)
            #expect(try strideeCounts(db, person: "bob") == nothingStored)
            #expect(try db.scalar("SELECT count(*) FROM health_store.connections", as: Int.self) == 0)
            // The account segment is percent-decoded: alice%40home would be alice@home.
            #expect(try alice.send("POST", "/v1/accounts/%61lice/apple/wellness", Self.wellness).status == 202)
        }
    }

    @Test("format other than absent, null or the kind's own name is 400 on both paths; absent and null are accepted",
          arguments: [false, true])
    func format(relay: Bool) throws {
        try withStridee { alice, db throws in
            let paths = StrideePaths(person: alice.person, relay: relay)
            if !relay { #expect(try alice.connect().status == 200) }
            for bad in [#""healthkit.v2""#, #""healthkit.wellness.v1""#, "1", #""""#] {
                let answer = try alice.send("POST", paths.workouts, StrideeBody.workout(["format": bad]))
                #expect(answer.status == 400, "\(bad)")
                #expect((json(answer)["error"] as? String)?.hasPrefix("format: ") == true, "\(answer.bodyText)")
            }
            for bad in [#""healthkit.v1""#, #""HEALTHKIT.WELLNESS.V1""#] {
                let answer = try alice.send("POST", paths.wellness, StrideeBody.wellness([StrideeBody.item()], format: bad))
                #expect(answer.status == 400, "\(bad)")
                #expect((json(answer)["error"] as? String)?.hasPrefix("format: ") == true, "\(answer.bodyText)")
            }
            #expect(try strideeCounts(db) == nothingStored)
            #expect(try alice.send("POST", paths.workouts, StrideeBody.workout(["format": nil])).status == 202)
            #expect(try alice.send("POST", paths.workouts, StrideeBody.workout(["format": "null", "duration": "1.0"])).status == 202)
            #expect(try alice.send("POST", paths.wellness, StrideeBody.wellness([StrideeBody.item()], format: nil)).status == 202)
            #expect(try alice.send("POST", paths.wellness, StrideeBody.wellness([StrideeBody.item()], format: "null")).status == 202)
        }
    }

    @Test("a malformed body is 400 with {\"error\"} naming the field, indexes from 0, and nothing of it is stored",
          arguments: [false, true])
    func malformed(relay: Bool) throws {
        try withStridee { alice, db throws in
            let paths = StrideePaths(person: alice.person, relay: relay)
            if !relay { #expect(try alice.connect().status == 200) }
            let points = (0..<5).map { StrideeBody.point(t: "2026-10-01T06:02:1\($0)Z", $0 == 3 ? ["lat": "95.2"] : [:]) }
            let cases: [(path: String, body: String, error: String)] = [
                (paths.workouts, StrideeBody.workout(["route": "[" + points.joined(separator: ",") + "]"]), "route[3].lat: "),
                (paths.workouts, StrideeBody.workout(["uuid": #""not-a-uuid""#]), "uuid: "),
                (paths.workouts, StrideeBody.workout(["serverType": #""KAYAKING""#]), "serverType: "),
                (paths.workouts, StrideeBody.workout(["endDate": #""2026-10-01T06:00:00Z""#]), "endDate: "),
                (paths.workouts, StrideeBody.workout(["heartRate": #"[{"t":"2026-10-01T06:02:16Z"}]"#]), "heartRate[0].v: "),
                (paths.workouts, "{\"uuid\":", ""),
                (paths.workouts, "[1,2]", "the body is not a JSON object"),
                (paths.wellness, StrideeBody.wellness((0..<13).map { StrideeBody.item($0 == 12 ? "stress" : "daily",
                                                                                       ["startTime": "\"2026-09-30T22:00:0\($0 % 10)Z\""]) }),
                 "items[12]: `stress` is not a kind Apple Health sends"),
                (paths.wellness, StrideeBody.wellness([StrideeBody.item("pulse_ox", ["samples": #"[{"t":"2026-10-01T06:00:00Z","v":101}]"#])]),
                 "items[0].samples[0].v: "),
                (paths.wellness, #"{"items":{}}"#, "items: "),
            ]
            for c in cases {
                let answer = try alice.send("POST", c.path, c.body)
                #expect(answer.status == 400, "\(c.body.prefix(80))")
                let error = try #require(json(answer)["error"] as? String, "\(answer.bodyText)")
                #expect(error.hasPrefix(c.error), "\(error)")
            }
            #expect(try strideeCounts(db) == nothingStored)
        }
    }

    @Test("the 30 MiB workout limit: exactly 30 MiB is read and stored, one byte more is 413 by Content-Length and while reading")
    func workoutLimit() throws {
        try withStridee { alice, db throws in
            let path = StrideePaths(person: alice.person, relay: true).workouts
            let limit = 30 * 1_048_576
            var exact = Array(Self.workout.utf8)
            exact += [UInt8](repeating: 0x20, count: limit - exact.count)
            let stored = try alice.send("POST", path, exact)
            #expect(stored.status == 202, "\(stored.bodyText)")
            // Over by one: refused on the announced length, before a byte of the body is read…
            let announced = try HTTPTestClient.sendLyingContentLength(port: alice.receiver.port, path: path, contentLength: limit + 1,
                                                                      body: [], headers: alice.authorization)
            defer { announced.close() }
            let early = try announced.readResponse(timeout: 10)
            #expect(early.status == 413 && early.header("Retry-After") == nil)
            // …and counted while reading a chunked body.
            try expectChunked413(alice, path: path, body: exact + [0x20])
            #expect(try db.scalar("SELECT body_sha256 = sha256($1::bytea) FROM health_store.stridee_workouts",
                                  [PostgresBytea(exact)], as: Bool.self) == true, "the body stored is the one of exactly 30 MiB")
        }
    }

    @Test("the wellness limits: 10 MiB and 2,000 items are stored, one byte or one item more is 413 and stores nothing")
    func wellnessLimits() throws {
        try withStridee { alice, db throws in
            let path = StrideePaths(person: alice.person, relay: true).wellness
            let limit = 10 * 1_048_576
            var exact = Array(StrideeBody.wellness([StrideeBody.item()]).utf8)
            exact += [UInt8](repeating: 0x20, count: limit - exact.count)
            #expect(try alice.send("POST", path, exact).status == 202)
            let announced = try HTTPTestClient.sendLyingContentLength(port: alice.receiver.port, path: path, contentLength: limit + 1,
                                                                      body: [], headers: alice.authorization)
            defer { announced.close() }
            #expect(try announced.readResponse(timeout: 10).status == 413)
            try expectChunked413(alice, path: path, body: exact + [0x20])

            try db.query("DELETE FROM health_store.wellness_items")
            let items = (0..<2001).map { i in
                StrideeBody.item("fitness", ["startTime": "\"\(StrideeBodies.stampZ(1_790_000_000 + Int64(i) * 60))\"", "vo2Max": "42"])
            }
            let over = try alice.send("POST", path, StrideeBody.wellness(items))
            #expect(over.status == 413, "\(over.bodyText)")
            #expect(over.header("Retry-After") == nil)
            #expect(try strideeCounts(db)["wellness"] == 0)
            let full = try alice.send("POST", path, StrideeBody.wellness(Array(items.dropLast())))
            #expect(full.bodyText == #"{"items":2000,"status":"active"}"#)
            #expect(try strideeCounts(db)["wellness"] == 2000)
        }
    }

    @Test("the Stridee limits replace --max-body on their paths only: a 5 MB ride under a 1 MiB --max-body is stored, a healthd body is not")
    func limitsReplaceMaxBody() throws {
        try withStridee(maxBody: 1 << 20) { alice, db throws in
            let ride = StrideeBodies.ride(seconds: 6 * 3600)
            #expect(ride.count > 4_000_000)
            let answer = try alice.send("POST", StrideePaths(person: alice.person, relay: true).workouts, ride)
            #expect(answer.status == 202, "\(answer.bodyText)")
            #expect(try db.scalar("SELECT points FROM health_store.workout_routes", as: Int.self) == 6 * 3600)
            let healthd = try alice.receiver.post(Array(repeating: 0x20, count: 1 << 21), headers: alice.authorization)
            #expect(healthd.status == 413)
        }
    }

    @Test("the credential is always Authorization: Bearer on the Stridee paths, whatever --auth-header says for healthd")
    func bearerAlways() throws {
        try withStridee(authHeader: "X-Health-Token") { alice, db throws in
            let path = StrideePaths(person: alice.person, relay: true).wellness
            let wrong: [[(name: String, value: String)]] = [[("X-Health-Token", alice.token)], [("Authorization", alice.token)],
                                                            [("X-Health-Token", "Bearer \(alice.token)")], []]
            for headers in wrong {
                #expect(try alice.send("POST", path, Array(Self.wellness.utf8), headers: headers).status == 401, "\(headers.map(\.name))")
            }
            #expect(try strideeCounts(db) == nothingStored)
            #expect(try alice.send("POST", path, Self.wellness).status == 202)
            // healthd keeps its own header.
            let batch = try Bodies.fixture("contract-example.json")
            #expect(try alice.receiver.post(batch, headers: alice.authorization).status == 401)
            #expect(try alice.receiver.post(batch, headers: [("X-Health-Token", alice.token)]).status == 200)
        }
    }

    @Test("a missing or wrong credential is 401 on every Stridee path and method, before the body is read")
    func unauthorized() throws {
        try withStridee { alice, db throws in
            let requests: [(method: String, path: String)] = [
                ("POST", "/v1/device/apple/workouts"), ("POST", "/v1/accounts/alice/apple/workouts"), ("POST", "/v1/device/apple/wellness"),
                ("POST", "/v1/accounts/alice/apple/wellness"), ("PUT", StrideePaths.connection), ("GET", StrideePaths.connection),
                ("DELETE", StrideePaths.connection),
            ]
            let wrong: [[(name: String, value: String)]] = [[], [("Authorization", "Bearer hw_wrong")]]
            for (method, path) in requests {
                for headers in wrong {
                    #expect(try alice.send(method, path, Array(Self.wellness.utf8), headers: headers).status == 401, "\(method) \(path)")
                }
            }
            #expect(try strideeCounts(db) == nothingStored)
            #expect(try db.scalar("SELECT count(*) FROM health_store.connections", as: Int.self) == 0)
        }
    }

    @Test("an expired token is 401 on every path, healthd's and Stridee's; one not yet expired works")
    func expiredToken() throws {
        try withStridee { alice, db throws in
            let tokens = TokenStore(pool: alice.receiver.pool)
            let (token, id) = try tokens.create(person: "carol", label: "phone", expiresIn: 3600)
            let carol = StrideeClient(receiver: alice.receiver, person: "carol", token: token)
            let listed = try #require(try tokens.list().first { $0.id == id })
            let expiresIn = try #require(listed.expiresAt).timeIntervalSince(listed.createdAt)
            #expect(abs(expiresIn - 3600) < 1)
            #expect(try carol.send("POST", "/v1/accounts/carol/apple/wellness", Self.wellness).status == 202)
            #expect(try alice.receiver.post(Bodies.fixture("contract-example.json"), headers: carol.authorization).status == 200)

            try db.query("UPDATE health_store.tokens SET expires_at = now() - interval '1 second' WHERE token_id = $1", [id])
            #expect(try carol.send("POST", "/v1/accounts/carol/apple/wellness", Self.wellness).status == 401)
            #expect(try carol.send("GET", StrideePaths.connection).status == 401)
            #expect(try carol.send("PUT", StrideePaths.connection).status == 401)
            #expect(try alice.receiver.post(Bodies.fixture("contract-example.json"), headers: carol.authorization).status == 401)
            #expect(try alice.receiver.get("/stats", headers: carol.authorization).status == 401)
            #expect(try counts(db, person: "carol").deliveries == 1)
            // Other tokens are untouched.
            #expect(try alice.send("GET", StrideePaths.connection).status == 404)
        }
    }

    @Test("a method the path does not answer is 405 with its Allow")
    func methodNotAllowed() throws {
        try withStridee { alice, _ throws in
            for method in ["GET", "PUT", "DELETE", "PATCH"] {
                let answer = try alice.send(method, "/v1/device/apple/workouts")
                #expect(answer.status == 405 && answer.header("Allow") == "POST", "\(method)")
            }
            for method in ["POST", "PATCH"] {
                let answer = try alice.send(method, StrideePaths.connection, Self.wellness)
                #expect(answer.status == 405 && answer.header("Allow") == "GET, PUT, DELETE", "\(method)")
            }
        }
    }

    @Test("any other path keeps the healthd rules: a batch on /v1/anything is stored, its content type checked, its body capped by --max-body")
    func otherPathsAreHealthd() throws {
        try withStridee { alice, db throws in
            let batch = try Bodies.fixture("contract-example.json")
            for path in ["/v1/device/apple/workouts/", "/v1/device/apple/runs", "/v1/accounts/alice/apple", "/v1/accounts//apple/workouts",
                         "/v2/device/apple/workouts"] {
                let answer = try alice.receiver.post(batch, headers: alice.authorization, path: path)
                #expect(answer.status == 200, "\(path)")
                #expect(try alice.receiver.post(batch, contentType: nil, headers: alice.authorization, path: path).status == 415, "\(path)")
            }
            #expect(try counts(db, person: "alice").deliveries == 5)
            #expect(try strideeCounts(db)["workouts"] == 0)
        }
    }

    @Test("with no token minted every push belongs to person default, whose relay path is /v1/accounts/default/…")
    func defaultPerson() throws {
        try withReceiver { receiver, db throws in
            let anyone = StrideeClient(receiver: receiver, person: "default", token: "")
            let open = [(name: String, value: String)]()
            #expect(try anyone.send("POST", "/v1/accounts/default/apple/workouts", Array(Self.workout.utf8), headers: open).status == 202)
            #expect(try anyone.send("POST", "/v1/accounts/me/apple/workouts", Array(Self.workout.utf8), headers: open).status == 403)
            #expect(try anyone.send("GET", StrideePaths.connection, headers: open).status == 200)
            // Behind a reverse proxy with no token: refused, as for healthd.
            let forwarded = try anyone.send("POST", "/v1/accounts/default/apple/wellness", Array(Self.wellness.utf8),
                                            headers: [("X-Forwarded-For", "203.0.113.9")])
            #expect(forwarded.status == 401)
            #expect(try strideeCounts(db, person: "default")["workouts"] == 1)
        }
    }

    @Test("a person lock held past lock_timeout is 503 \"database busy\" with Retry-After, and the push stores nothing",
          .disabled(if: TestPostgres.citusURL != nil, Comment(rawValue: TestPostgres.workerTimeoutsReason)))
    func databaseBusy() throws {
        try withStridee { alice, db throws in
            let admin = try db.connect()
            defer { admin.close() }
            // Another writer holds alice's lock: the push waits past its lock_timeout, busy, not broken.
            let impatient = try RunningReceiver(connectionString: db.connectionString, sessionSettings: [("lock_timeout", "200ms")])
            defer { impatient.stop() }
            let client = StrideeClient(receiver: impatient, person: "alice", token: alice.token)
            try admin.query("BEGIN")
            try admin.query("SELECT health_store.lock_person('alice')")
            for (path, body) in [("/v1/accounts/alice/apple/workouts", Self.workout), ("/v1/accounts/alice/apple/wellness", Self.wellness)] {
                let busy = try client.send("POST", path, body)
                #expect(busy.status == 503 && busy.header("Retry-After") == "60", "\(path)")
                #expect(json(busy)["error"] as? String == "database busy; retry later")
            }
            #expect(try client.connect().status == 503)
            try admin.query("ROLLBACK")
            #expect(try strideeCounts(db) == nothingStored)
            #expect(try db.scalar("SELECT count(*) FROM health_store.connections", as: Int.self) == 0)
        }
    }

    @Test("a read-only database is 503 with Retry-After when the push is stored, never 4xx, and nothing is stored")
    func databaseReadOnly() throws {
        // No token: the credential check writes nothing, so the failure is the store's own.
        try withReceiver { receiver, db throws in
            try TestPostgres.setReadOnly(db, true)
            let readOnly = try RunningReceiver(connectionString: db.connectionString)
            defer { readOnly.stop() }
            let anyone = StrideeClient(receiver: readOnly, person: "default", token: "")
            let open = [(name: String, value: String)]()
            for (path, body) in [("/v1/accounts/default/apple/workouts", Self.workout), ("/v1/accounts/default/apple/wellness", Self.wellness)] {
                let answer = try anyone.send("POST", path, Array(body.utf8), headers: open)
                #expect(answer.status == 503 && answer.header("Retry-After") == "60", "\(path): \(answer.bodyText)")
            }
            #expect(try anyone.send("PUT", StrideePaths.connection, headers: open).status == 503)
            try TestPostgres.setReadOnly(db, false)
            #expect(try strideeCounts(db, person: "default") == nothingStored)
            #expect(try db.scalar("SELECT count(*) FROM health_store.connections", as: Int.self) == 0)
        }
    }
}

/// Sends `body` chunked (1 MiB chunks) and expects the bare 413 at the end, nothing stored of it.
func expectChunked413(_ client: StrideeClient, path: String, body: [UInt8]) throws {
    let connection = try HTTPTestConnection(port: client.receiver.port, timeout: 30)
    defer { connection.close() }
    let chunks = stride(from: 0, to: body.count, by: 1 << 20).map { Array(body[$0..<min($0 + (1 << 20), body.count)]) }
    try connection.send(HTTPTestClient.head(method: "POST", path: path,
                                            headers: client.authorization + [("Transfer-Encoding", "chunked")]) + chunkedBody(chunks))
    let answer = try connection.readResponse(timeout: 30)
    #expect(answer.status == 413 && answer.header("Retry-After") == nil)
}
