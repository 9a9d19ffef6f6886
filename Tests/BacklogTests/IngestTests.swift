import Backlog
import Foundation
import HealthPayload
import Postgres
import Testing
import TestSupport
import Warehouse

@Suite("Ingest from files")
struct IngestTests {
    /// A folder with every format: two JSON bodies (one in a subfolder), three CSV bodies appended
    /// to one file, a JSON-lines file of two bodies and a gzipped JSON body: 10 samples, 8 batches.
    static func mixedBacklog() throws -> TempFolder {
        let folder = try TempFolder()
        try folder.write("a.json", TestBodies.json(export: 1, steps: [(1, 11), (2, 12)]))
        try folder.write("sub/b.json", TestBodies.json(export: 2, steps: [(3, 13)]))
        try folder.write("c.csv", TestBodies.csv(export: 3, sequence: 1, isFinal: false, steps: [(4, 14)])
            + TestBodies.csv(export: 3, sequence: 2, isFinal: false, steps: [(5, 15), (6, 16)])
            + TestBodies.csv(export: 3, sequence: 3, steps: [(7, 17)]))
        try folder.write("d.jsonl", TestBodies.lines([TestBodies.json(export: 4, steps: [(8, 18)]),
                                                      TestBodies.json(export: 5, steps: [(9, 19)])]))
        try folder.write("e.json.gz", gzip(TestBodies.json(export: 6, steps: [(10, 20)])))
        try folder.write("notes.txt", Array("not a backlog file".utf8))
        try folder.write(".hidden.json", Array("{".utf8))
        return folder
    }

    @Test("a folder of JSON bodies, appended CSV bodies, a JSON-lines file and a .json.gz ingests fully, values and deliveries checked")
    func mixedFolder() throws {
        let folder = try Self.mixedBacklog()
        defer { folder.remove() }
        try TestPostgres.withDatabase { db in
            let summary = ingest(db, [folder.path])
            #expect(summary.failures == [])
            #expect(summary.filesSeen == 5)
            #expect(summary.filesIngested == 5)
            #expect(summary.filesFailed == 0)
            #expect(summary.batches == 8)
            #expect(summary.samples == 10)
            #expect(summary.inserted == 10)
            #expect(summary.duplicates == 0)
            #expect(try held(db) == Held(samples: 10, deliveries: 8, ledger: 5))

            let values = try db.query("SELECT uuid::text, value, person, unit FROM health_store.samples ORDER BY uuid")
            #expect(values.map { $0[0] } == (1...10).map { TestBodies.uuid($0).lowercased() })
            #expect(try values.map { try $0.decode(1, as: Double.self) } == (11...20).map(Double.init))
            #expect(values.allSatisfy { $0[2] == "default" && $0[3] == "count" })

            // Every delivery says it came from a file, which one, and in which format.
            let deliveries = try db.query("""
                SELECT origin, file, format, export_id::text, batch_sequence, is_final, samples, inserted
                FROM health_store.deliveries ORDER BY delivery_id
                """)
            #expect(deliveries.allSatisfy { $0[0] == "file" })
            let files = deliveries.map { URL(fileURLWithPath: $0[1] ?? "").lastPathComponent }
            // Walked in name order: a.json, c.csv, d.jsonl, e.json.gz, then sub/b.json.
            #expect(files == ["a.json", "c.csv", "c.csv", "c.csv", "d.jsonl", "d.jsonl", "e.json.gz", "b.json"])
            #expect(deliveries[0][1] == real(folder.path + "/a.json"))
            #expect(deliveries.map { $0[2] } == ["json", "csv", "csv", "csv", "json", "json", "json", "json"])
            #expect(deliveries[1][3] == TestBodies.exportId(3).lowercased())
            #expect(try deliveries[1...3].map { try $0.decode(4, as: Int.self) } == [1, 2, 3])
            #expect(deliveries[1...3].map { $0[5] } == ["f", "f", "t"])
            #expect(try deliveries.map { try $0.decode(6, as: Int.self) } == [2, 1, 2, 1, 1, 1, 1, 1])

            // The ledger: each file read to its end, with its totals.
            let ledger = try db.query("""
                SELECT path, format, compressed, size_bytes = ingested_bytes, ingested_lines, ingested_records, batches, samples, inserted, runs
                FROM health_store.ingested_files ORDER BY path
                """)
            let csvRow = try #require(ledger.first { $0[0]?.hasSuffix("/c.csv") == true })
            #expect(csvRow[1] == "csv" && csvRow[2] == "f" && csvRow[3] == "t")
            #expect(try csvRow.decode(4, as: Int.self) == 7, "3 headers + 4 rows")
            #expect(try csvRow.decode(5, as: Int.self) == 7)
            #expect(try csvRow.decode(6, as: Int.self) == 3)
            #expect(try csvRow.decode(7, as: Int.self) == 4)
            let gzRow = try #require(ledger.first { $0[0]?.hasSuffix("/e.json.gz") == true })
            #expect(gzRow[1] == "json" && gzRow[2] == "t" && gzRow[3] == "t")
            let jsonlRow = try #require(ledger.first { $0[0]?.hasSuffix("/d.jsonl") == true })
            #expect(jsonlRow[1] == "jsonl")
            #expect(try jsonlRow.decode(4, as: Int.self) == 2)
        }
    }

    @Test("batches share a transaction, yet one the database refuses is undone alone: the files around it are stored, with their rollups, and it is named")
    func refusedBatchInAGroup() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        for n in 1...5 {
            _ = try folder.write("f\(n).json", TestBodies.json(export: n, steps: [(n * 10 + 1, 100 + n), (n * 10 + 2, 200 + n)]))
        }
        try TestPostgres.withDatabase { db in
            // The database refuses the delivery of export 3 (as a full disk or a bug would).
            try db.query("""
                CREATE FUNCTION public.refuse_export() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  IF NEW.export_id = '\(TestBodies.exportId(3))'::uuid THEN RAISE EXCEPTION 'refused for the test'; END IF;
                  RETURN NEW;
                END $$
                """)
            try TestPostgres.triggerDDL(db, "CREATE TRIGGER refuse BEFORE INSERT ON health_store.deliveries FOR EACH ROW EXECUTE FUNCTION public.refuse_export()")
            let summary = ingest(db, [folder.path])
            #expect(summary.failures.count == 1)
            #expect(summary.failures.first?.path.hasSuffix("f3.json") == true)
            #expect(summary.failures.first?.message.contains("refused for the test") == true)
            #expect(summary.filesIngested == 4)
            #expect(summary.filesFailed == 1)
            #expect(summary.batches == 4)
            #expect(try held(db) == Held(samples: 8, deliveries: 4, ledger: 4))
            // Nothing of export 3, not even its samples (inserted before its delivery row failed).
            #expect(try db.scalar("SELECT count(*) FROM health_store.samples WHERE value IN (103, 203)", as: Int.self) == 0)
            let stored: [Int] = [1, 2, 4, 5].map { n in 300 + 2 * n }
            let expectedTotal = Double(stored.reduce(0, +))
            #expect(try db.scalar("SELECT sum(value) FROM health.daily_totals WHERE person = 'default'", as: Double.self) == expectedTotal)
            #expect(try db.scalar("SELECT count(*) FROM health_store.verify_rollups('default')", as: Int.self) == 0)
        }
    }

    @Test("a second run reads nothing and writes nothing: every file skipped, no delivery, no ledger change")
    func secondRunSkipsEverything() throws {
        let folder = try Self.mixedBacklog()
        defer { folder.remove() }
        try TestPostgres.withDatabase { db in
            _ = ingest(db, [folder.path])
            let before = try held(db)
            let ledgerBefore = try db.query("SELECT path, last_ingested_at::text, runs, xmin::text FROM health_store.ingested_files ORDER BY path").map { [$0[0], $0[1], $0[2], $0[3]] }

            // Unread, not merely unchanged: same size and time over garbage must still be skipped.
            let csv = folder.path + "/c.csv"
            let size = try FileManager.default.attributesOfItem(atPath: csv)[.size] as! Int
            var info = stat()
            stat(csv, &info)
            try folder.write("c.csv", [UInt8](repeating: UInt8(ascii: "#"), count: size))
            var times = [info.st_atim, info.st_mtim]
            utimensat(AT_FDCWD, csv, &times, 0)

            let second = ingest(db, [folder.path])
            #expect(second.failures == [])
            #expect(second.filesSeen == 5)
            #expect(second.filesSkipped == 5)
            #expect(second.filesIngested == 0)
            #expect(second.batches == 0)
            #expect(second.samples == 0)
            #expect(try held(db) == before)
            let ledgerAfter = try db.query("SELECT path, last_ingested_at::text, runs, xmin::text FROM health_store.ingested_files ORDER BY path").map { [$0[0], $0[1], $0[2], $0[3]] }
            #expect(ledgerAfter == ledgerBefore, "no ledger row was rewritten (same xmin)")
        }
    }

    @Test("a CSV body appended twice (the app's retry is the identical bytes) is two deliveries, counted once in its run, as over HTTP")
    func retriedCSVBody() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        let first = TestBodies.csv(export: 8, sequence: 1, isFinal: false, steps: [(1, 11), (2, 12)])
        try folder.write("r.csv", first + first + TestBodies.csv(export: 8, sequence: 2, steps: [(3, 13)]))
        try TestPostgres.withDatabase { db in
            let summary = ingest(db, [folder.path])
            #expect(summary.failures == [])
            #expect(summary.batches == 3 && summary.inserted == 3 && summary.duplicates == 2)
            let deliveries = try db.query("SELECT batch_sequence, samples, inserted, duplicates FROM health.deliveries ORDER BY received_at, batch_sequence, duplicates")
                .map { [$0[0], $0[1], $0[2], $0[3]] }
            #expect(deliveries == [["1", "2", "2", "0"], ["1", "2", "0", "2"], ["2", "1", "1", "0"]],
                    "before: one delivery of batch 1 with 4 samples")
            #expect(try db.scalar("SELECT samples FROM health.export_runs", as: Int.self) == 3, "before: 5")
        }
    }

    @Test("a body appended to a CSV file is the only thing the next run ingests: one new delivery")
    func appendedCSVBody() throws {
        let folder = try Self.mixedBacklog()
        defer { folder.remove() }
        try TestPostgres.withDatabase { db in
            _ = ingest(db, [folder.path])
            let before = try held(db)
            try folder.append("c.csv", TestBodies.csv(export: 7, steps: [(11, 21), (12, 22)]))

            let summary = ingest(db, [folder.path])
            #expect(summary.failures == [])
            #expect(summary.filesIngested == 1)
            #expect(summary.filesSkipped == 4)
            #expect(summary.batches == 1)
            #expect(summary.samples == 2)
            #expect(summary.inserted == 2)
            #expect(summary.duplicates == 0, "the old bodies were not read again")
            #expect(try held(db) == Held(samples: before.samples + 2, deliveries: before.deliveries + 1, ledger: before.ledger))
            let newest = try requireRow(db.query("SELECT export_id::text, file, samples FROM health_store.deliveries ORDER BY delivery_id DESC LIMIT 1"))
            #expect(newest[0] == TestBodies.exportId(7).lowercased())
            #expect(newest[1] == real(folder.path + "/c.csv"))
            let ledger = try requireRow(db.query("""
                SELECT ingested_bytes = size_bytes, ingested_records, ingested_lines, runs, batches, samples
                FROM health_store.ingested_files WHERE path LIKE '%/c.csv'
                """))
            #expect(ledger[0] == "t")
            #expect(try ledger.decode(1, as: Int.self) == 10)
            #expect(try ledger.decode(2, as: Int.self) == 10)
            #expect(try ledger.decode(3, as: Int.self) == 2)
            #expect(try ledger.decode(4, as: Int.self) == 4)
            #expect(try ledger.decode(5, as: Int.self) == 6)
        }
    }

    @Test("CSV rows appended without a header row of their own belong to the body before them: the file is read again from the start")
    func appendedRowsWithoutHeader() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        try folder.write("x.csv", TestBodies.csv(export: 1, steps: [(1, 10)]))
        try TestPostgres.withDatabase { db in
            #expect(ingest(db, [folder.path]).inserted == 1)
            let more = TestBodies.csv(export: 1, steps: [(2, 11)])
            try folder.append("x.csv", Array(more[(more.firstIndex(of: 0x0A)! + 1)...]))
            let summary = ingest(db, [folder.path])
            #expect(summary.failures == [])
            #expect(summary.batches == 1)
            #expect(summary.inserted == 1)
            #expect(summary.duplicates == 1)
            #expect(try db.scalar("SELECT value FROM health_store.samples WHERE uuid = $1::uuid", [TestBodies.uuid(2)], as: Double.self) == 11)
        }
    }

    @Test("new lines of a JSON-lines file are read from where it ended")
    func appendedJSONLines() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        try folder.write("log.jsonl", TestBodies.lines([TestBodies.json(export: 1, steps: [(1, 5)])]))
        try TestPostgres.withDatabase { db in
            #expect(ingest(db, [folder.path]).batches == 1)
            try folder.append("log.jsonl", TestBodies.lines([TestBodies.json(export: 2, steps: [(2, 6)]), TestBodies.json(export: 3, steps: [(3, 7)])]))
            let summary = ingest(db, [folder.path])
            #expect(summary.failures == [])
            #expect(summary.batches == 2)
            #expect(summary.inserted == 2)
            #expect(summary.duplicates == 0)
            #expect(try db.query("SELECT export_id::text FROM health_store.deliveries ORDER BY delivery_id").map { $0[0] }
                    == [1, 2, 3].map { TestBodies.exportId($0).lowercased() })
        }
    }

    @Test("a corrupt file among good ones: each bad file named with its line or record, the good ones stored")
    func corruptAmongGood() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        try folder.write("1-good.json", TestBodies.json(export: 1, steps: [(1, 10)]))
        try folder.write("2-version.json", TestBodies.json(export: 2, steps: [(2, 10)], schemaVersion: "2"))
        try folder.write("3-not-json.json", Array("{\"schemaVersion\": 1,\n  oops".utf8))
        // Two good bodies, then a third whose second row has too few fields.
        var csv = TestBodies.csv(export: 3, steps: [(3, 10)]) + TestBodies.csv(export: 4, steps: [(4, 10), (5, 10)])
        csv += TestBodies.csv(export: 5, steps: [(6, 10)]) + Array("1,short,row\n".utf8)
        try folder.write("4-broken.csv", csv)
        try folder.write("5-bad.json.gz", Array("this is not gzip".utf8))
        let truncated = try gzip(TestBodies.json(export: 6, steps: [(7, 10)]))
        try folder.write("6-truncated.json.gz", Array(truncated.prefix(truncated.count - 12)))
        try folder.write("7-good.csv", TestBodies.csv(export: 7, steps: [(8, 10)]))
        try TestPostgres.withDatabase { db in
            let summary = ingest(db, [folder.path])
            #expect(summary.filesSeen == 7)
            #expect(summary.filesFailed == 5)
            #expect(summary.filesIngested == 2)
            let messages = Dictionary(summary.failures.map { (URL(fileURLWithPath: $0.path).lastPathComponent, $0.message) }, uniquingKeysWith: { a, _ in a })
            #expect(summary.failures.count == 5)
            #expect(summary.failures.allSatisfy { $0.path.hasPrefix(folder.path + "/") })
            #expect(messages["2-version.json"] == "schemaVersion is 2; only 1 is accepted")
            #expect(messages["3-not-json.json"]?.contains("(line 2, column 3)") == true, "\(messages["3-not-json.json"] ?? "")")
            // Records: 3 headers + 3 rows before the bad row, which is record 8 on line 8 of the file.
            #expect(messages["4-broken.csv"] == "record 8 (line 8): 3 fields; the header has 26")
            #expect(messages["5-bad.json.gz"]?.hasPrefix("not valid gzip data (compressed byte ") == true, "\(messages["5-bad.json.gz"] ?? "")")
            #expect(messages["6-truncated.json.gz"]?.hasPrefix("gzip data ends early") == true, "\(messages["6-truncated.json.gz"] ?? "")")

            // The good files, and the two good bodies of the broken CSV file, are stored; nothing of a bad body.
            let stored = try db.query("SELECT uuid::text FROM health_store.samples ORDER BY uuid").map { $0[0] ?? "" }
            #expect(stored == [1, 3, 4, 5, 8].map { TestBodies.uuid($0).lowercased() })
            // The broken CSV's ledger row stops before its bad body; the other failed files have none.
            let ledger = try db.query("SELECT path, ingested_bytes, size_bytes, ingested_records FROM health_store.ingested_files ORDER BY path")
            #expect(ledger.map { URL(fileURLWithPath: $0[0] ?? "").lastPathComponent } == ["1-good.json", "4-broken.csv", "7-good.csv"])
            let broken = ledger[1]
            let goodPart = TestBodies.csv(export: 3, steps: [(3, 10)]).count + TestBodies.csv(export: 4, steps: [(4, 10), (5, 10)]).count
            #expect(try broken.decode(1, as: Int.self) == goodPart)
            #expect(try broken.decode(3, as: Int.self) == 5)

            // The next run retries only what failed: the broken body fails again, nothing is stored twice.
            let again = ingest(db, [folder.path])
            #expect(again.filesFailed == 5)
            #expect(again.filesSkipped == 2)
            #expect(again.batches == 0)
            #expect(again.failures.first { $0.path.hasSuffix("4-broken.csv") }?.message == "record 8 (line 8): 3 fields; the header has 26")
        }
    }

    @Test("an unterminated quoted field is named with the file's record and line; a body cut short is never stored")
    func unterminatedQuote() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        // A quoted source with a line end inside it (fine), then a body whose last row opens a quote that never closes.
        var first = TestBodies.csv(export: 1, steps: [(1, 10)])
        first = Array(String(decoding: first, as: UTF8.self).replacingOccurrences(of: "com.apple.Health", with: "\"Phone,\nof Ann\"").utf8)
        let second = TestBodies.csv(export: 2, steps: [(2, 10)]) + Array("1,\"never closed,\n2,3\n".utf8)
        try folder.write("cut.csv", first + second)
        try TestPostgres.withDatabase { db in
            let summary = ingest(db, [folder.path])
            #expect(summary.failures.map(\.message) == ["record 5 (line 6): unterminated quoted field at the end of the file (if the file is still being written, the next run reads it again)"])
            #expect(try db.query("SELECT source FROM health_store.samples").map { $0[0] } == ["Phone,\nof Ann"])
            // Finished later: the rest of the body arrives and the next run stores it.
            try folder.write("cut.csv", first + TestBodies.csv(export: 2, steps: [(2, 10), (3, 11)]))
            let later = ingest(db, [folder.path])
            #expect(later.failures == [])
            #expect(later.inserted == 2)
            #expect(later.duplicates == 0)
        }
    }

    @Test("a JSON-lines file with a bad line: the good lines are stored, the bad one named, the ledger stops before it")
    func jsonLinesWithBadLine() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        let line1 = TestBodies.json(export: 1, steps: [(1, 10)])
        let bad = TestBodies.json(export: 2, steps: [(2, 10)], schemaVersion: "2")
        let line3 = TestBodies.json(export: 3, steps: [(3, 10)])
        try folder.write("log.jsonl", TestBodies.lines([line1, [], bad, line3]))
        try TestPostgres.withDatabase { db in
            let first = ingest(db, [folder.path])
            #expect(first.failures == [IngestFailure(path: folder.path + "/log.jsonl", message: "line 3: schemaVersion is 2; only 1 is accepted")])
            #expect(first.filesFailed == 1)
            #expect(first.batches == 2)
            #expect(try db.query("SELECT uuid::text FROM health_store.samples ORDER BY uuid").map { $0[0] } == [1, 3].map { TestBodies.uuid($0).lowercased() })
            let ledger = try requireRow(db.query("SELECT ingested_bytes, ingested_lines, size_bytes FROM health_store.ingested_files"))
            #expect(try ledger.decode(0, as: Int.self) == line1.count + 2, "up to the bad line: line 1 and the blank line")
            #expect(try ledger.decode(1, as: Int.self) == 2)

            // Retried from the bad line: it fails again, line 4 comes again as a duplicate.
            let second = ingest(db, [folder.path])
            #expect(second.failures.map(\.message) == ["line 3: schemaVersion is 2; only 1 is accepted"])
            #expect(second.batches == 1)
            #expect(second.duplicates == 1)

            // Fixed in place: the rest goes in and the file is complete.
            try folder.write("log.jsonl", TestBodies.lines([line1, [], TestBodies.json(export: 2, steps: [(2, 10)]), line3]))
            let third = ingest(db, [folder.path])
            #expect(third.failures == [])
            #expect(third.inserted == 1)
            #expect(try db.scalar("SELECT (ingested_bytes = size_bytes)::text FROM health_store.ingested_files", as: String.self) == "true")
            #expect(ingest(db, [folder.path]).filesSkipped == 1)
        }
    }

    @Test("a changed .gz file is read again whole; one only touched is not read again, its new time recorded")
    func gzipChangedOrTouched() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        let path = try folder.write("x.jsonl.gz", gzip(TestBodies.lines([TestBodies.json(export: 1, steps: [(1, 10)])])))
        try TestPostgres.withDatabase { db in
            #expect(ingest(db, [folder.path]).inserted == 1)
            setModified(path, seconds: 1_900_000_000)
            let touched = ingest(db, [folder.path])
            #expect(touched.filesSkipped == 1)
            #expect(touched.batches == 0)
            #expect(try db.scalar("SELECT mtime_ns FROM health_store.ingested_files", as: Int64.self) == 1_900_000_000 * 1_000_000_000)
            #expect(ingest(db, [folder.path]).filesSkipped == 1)

            try folder.write("x.jsonl.gz", gzip(TestBodies.lines([TestBodies.json(export: 1, steps: [(1, 10)]), TestBodies.json(export: 2, steps: [(2, 10)])])))
            let changed = ingest(db, [folder.path])
            #expect(changed.filesIngested == 1)
            #expect(changed.batches == 2)
            #expect(changed.duplicates == 1)
            #expect(changed.inserted == 1)
            #expect(try db.scalar("SELECT runs FROM health_store.ingested_files", as: Int.self) == 2)
        }
    }

    @Test("several gzip members in one file are read through")
    func gzipMembers() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        let members = try gzip(TestBodies.lines([TestBodies.json(export: 1, steps: [(1, 10)])]))
            + gzip(TestBodies.lines([TestBodies.json(export: 2, steps: [(2, 10)])]))
        try folder.write("day.jsonl.gz", members)
        try folder.write("day.csv.gz", try gzip(TestBodies.csv(export: 3, steps: [(3, 10)])) + gzip(TestBodies.csv(export: 4, steps: [(4, 10)])))
        try TestPostgres.withDatabase { db in
            let summary = ingest(db, [folder.path])
            #expect(summary.failures == [])
            #expect(summary.batches == 4)
            let samples = try held(db).samples
            #expect(samples == 4)
        }
    }

    @Test("a file rewritten from the start is read whole; --force reads unchanged files again as duplicates")
    func rewrittenAndForced() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        try folder.write("x.csv", TestBodies.csv(export: 1, steps: [(1, 10)]))
        try TestPostgres.withDatabase { db in
            _ = ingest(db, [folder.path])
            // Longer, but the old part is not a prefix any more: read from the start.
            try folder.write("x.csv", TestBodies.csv(export: 1, steps: [(1, 99)]) + TestBodies.csv(export: 2, steps: [(2, 10)]))
            let rewritten = ingest(db, [folder.path])
            #expect(rewritten.batches == 2)
            #expect(rewritten.replaced == 1, "uuid 1 came with another value")
            #expect(rewritten.inserted == 1)
            #expect(try db.scalar("SELECT value FROM health_store.samples WHERE uuid = $1::uuid", [TestBodies.uuid(1)], as: Double.self) == 99)

            let forced = ingest(db, [folder.path], force: true)
            #expect(forced.filesIngested == 1)
            #expect(forced.batches == 2)
            #expect(forced.duplicates == 2)
            #expect(forced.inserted == 0)
            #expect(try held(db).deliveries == 5)
        }
    }

    @Test("the ledger row commits with the file's last batch: when that batch fails, the file is not recorded and the next run finishes it")
    func ledgerWithLastBatch() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        try folder.write("x.jsonl", TestBodies.lines([TestBodies.json(export: 1, steps: [(1, 10)]), TestBodies.json(export: 2, steps: [(2, 10)])]))
        try TestPostgres.withDatabase { db in
            try db.query("""
                CREATE FUNCTION pg_temp_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN RAISE EXCEPTION 'refused for the test'; END $$
                """)
            try TestPostgres.triggerDDL(db, """
                CREATE TRIGGER refuse BEFORE INSERT ON health_store.deliveries FOR EACH ROW
                WHEN (NEW.export_id = '\(TestBodies.exportId(2))') EXECUTE FUNCTION pg_temp_refuse()
                """)
            let first = ingest(db, [folder.path])
            #expect(first.filesFailed == 1)
            #expect(first.failures.count == 1)
            #expect(first.failures.first?.message.contains("refused for the test") == true)
            #expect(try held(db) == Held(samples: 1, deliveries: 1, ledger: 0), "batch 1 stored, the file not recorded")

            try TestPostgres.triggerDDL(db, "DROP TRIGGER refuse ON health_store.deliveries")
            let second = ingest(db, [folder.path])
            #expect(second.failures == [])
            #expect(second.duplicates == 1)
            #expect(second.inserted == 1)
            #expect(try held(db) == Held(samples: 2, deliveries: 3, ledger: 1))
        }
    }

    @Test("probes in files are skipped: nothing stored, the file recorded")
    func probes() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        try folder.write("probe.json", Bodies.fixture("probe.json"))
        try folder.write("probe.csv", Bodies.fixture("probe.csv"))
        try folder.write("mixed.jsonl", TestBodies.lines([Bodies.fixture("probe.json"), TestBodies.json(export: 1, steps: [(1, 10)])]))
        try TestPostgres.withDatabase { db in
            let summary = ingest(db, [folder.path])
            #expect(summary.failures == [])
            #expect(summary.probes == 3)
            #expect(summary.filesIngested == 3)
            let now = try held(db)
            #expect(now == Held(samples: 1, deliveries: 1, ledger: 3))
        }
    }

    @Test("the person owns the samples and has a ledger of their own")
    func person() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        try folder.write("x.json", TestBodies.json(export: 1, steps: [(1, 10)]))
        try TestPostgres.withDatabase { db in
            #expect(ingest(db, [folder.path], person: "alice").inserted == 1)
            #expect(ingest(db, [folder.path], person: "alice").filesSkipped == 1)
            #expect(ingest(db, [folder.path], person: "bob").inserted == 1)
            let owners: [String?] = try db.query("SELECT person FROM health_store.samples ORDER BY person").map { $0[0] }
            let ledgers: [String?] = try db.query("SELECT person FROM health_store.ingested_files ORDER BY person").map { $0[0] }
            #expect(owners == ["alice", "bob"])
            #expect(ledgers == ["alice", "bob"])
        }
    }

    @Test("a missing path, and a named file whose format is unknown, fail; the rest is ingested")
    func missingAndUnknown() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        let good = try folder.write("x.json", TestBodies.json(export: 1, steps: [(1, 10)]))
        let unknown = try folder.write("x.body", TestBodies.json(export: 2, steps: [(2, 10)]))
        try TestPostgres.withDatabase { db in
            let summary = ingest(db, [folder.path + "/nope", unknown, good])
            #expect(summary.filesSeen == 3)
            #expect(summary.filesFailed == 2)
            #expect(summary.filesIngested == 1)
            #expect(summary.failures.map(\.message) == ["cannot read: No such file or directory",
                                                       "cannot tell the format from the name: name it .json, .jsonl, .ndjson or .csv (optionally .gz), or pass --format"])
            // With --format the named file is read as that format.
            let forced = ingest(db, [unknown], format: .json)
            #expect(forced.inserted == 1)
        }
    }
}
