import HealthPayload

/// An export document or a GPX file held in memory, read the way `ExportReader` reads a file —
/// the same filter, parser, document reader and mapping, fed in chunks of a given size — into
/// what the import would store. For the fuzzer (`Sources/ExportFuzzer`) and tests: no file, no
/// archive, no database.
public enum ExportDocumentCheck {
    /// What a document gave.
    public struct Outcome: Sendable {
        /// Each record's and workout's sample object, as `store_batch` would receive it.
        public var samples: [[UInt8]] = []
        /// Each activity summary's row object.
        public var summaries: [[UInt8]] = []
        /// The route files the workouts name, as written.
        public var routeFiles: [String] = []
        /// What was skipped or quarantined (`isQuarantined`), in order.
        public var skipped: [SkippedElement] = []
        /// The lines of the document (1 + its line breaks).
        public var lines = 0
    }

    /// Reads `document` (export.xml's bytes) in chunks of `chunkSize` bytes, mapping its items
    /// with `catalog`.
    public static func read(_ document: [UInt8], catalog: ExportCatalog, chunkSize: Int) -> Outcome {
        var outcome = Outcome()
        let mapper = ExportMapper(catalog: catalog)
        let reader = ExportDocumentReader { item in
            switch item {
            case .record(let r):
                switch mapper.record(r) {
                case .success(let sample): outcome.samples.append(sample.json)
                case .failure(let f): outcome.skipped.append(SkippedElement(name: "Record", line: r.line, refused: f))
                }
            case .workout(let w):
                outcome.routeFiles += w.routeFiles
                switch mapper.workout(w) {
                case .success(let sample): outcome.samples.append(sample.json)
                case .failure(let f): outcome.skipped.append(SkippedElement(name: "Workout", line: w.line, refused: f))
                }
            case .activitySummary(let s):
                switch mapper.activitySummary(s) {
                case .success(let json): outcome.summaries.append(json)
                case .failure(let f): outcome.skipped.append(SkippedElement(name: "ActivitySummary", line: s.line, refused: f))
                }
            case .skipped(let s):
                outcome.skipped.append(s)
            }
        }
        let parser = XMLStreamParser(handler: reader, restartRoot: "HealthData")
        feed(document, chunkSize: chunkSize, to: parser)
        reader.documentEnded(atLine: parser.inputLines)
        outcome.lines = parser.inputLines
        return outcome
    }

    /// Reads a GPX file's bytes in chunks of `chunkSize` as a route file of at most `maxPoints`
    /// points: the route, or why it cannot be read.
    public static func readGPX(_ bytes: [UInt8], chunkSize: Int, maxPoints: Int) -> Result<WorkoutRoute, AppleExportError> {
        do {
            return try GPXReader.read(MemoryStream(bytes: bytes), name: "route.gpx", maxPoints: maxPoints, chunkSize: chunkSize)
                .mapError { AppleExportError($0.reason) }
        } catch {
            return .failure(error)
        }
    }

    private static func feed(_ bytes: [UInt8], chunkSize: Int, to parser: XMLStreamParser) {
        let size = max(1, chunkSize)
        bytes.withUnsafeBytes { all in
            for start in stride(from: 0, to: all.count, by: size) {
                parser.feed(UnsafeRawBufferPointer(rebasing: all[start..<min(start + size, all.count)]))
            }
        }
        parser.finish()
    }
}

/// Bytes held in memory, as a stream.
final class MemoryStream: ByteStream {
    private let bytes: [UInt8]
    private var offset = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(AppleExportError) -> Int {
        let n = min(buffer.count, bytes.count - offset)
        guard n > 0 else { return 0 }
        bytes.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: n)
        }
        offset += n
        return n
    }
}
