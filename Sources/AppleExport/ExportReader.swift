/// The Health app's export read as a stream into batches: the document inflated and parsed
/// (`XMLStreamParser` over libxml2), its items mapped (`ExportMapper`), the route files its
/// workouts name read (`GPXReader`), and batches of at most a thousand samples and summaries
/// cut (`ExportBatcher`). Pure: bytes in, values out, no database. Memory is bounded by the
/// largest item and a batch, whatever the document's size.
///
/// Used by one thread at a time (the pipeline's reading thread).
public final class ExportReader: @unchecked Sendable {
    let source: ExportSource
    let mapper: ExportMapper
    let resumeAfter: Int
    let numbering: ExportNumbering
    /// Control characters XML forbids, read as spaces (known once the document is read).
    public private(set) var controlCharacters = 0

    /// A reader of `source`'s document, passing over its first `resumeAfter` items (stored by
    /// an earlier run), numbering its deliveries by `numbering`.
    public init(source: ExportSource, catalog: ExportCatalog, resumeAfter: Int, numbering: ExportNumbering) {
        self.source = source
        mapper = ExportMapper(catalog: catalog)
        self.resumeAfter = resumeAfter
        self.numbering = numbering
    }

    /// Reads the document, handing each batch to `send` (the last one marked final); returns
    /// false when `send` refused one. Elements that cannot be read go to `onSkipped`; the bytes
    /// of the document read so far to `onProgress`.
    ///
    /// - Throws: `AppleExportError` when the archive or file cannot be read on (the batches sent
    ///   before stay sent; none of them is final).
    public func read(send: @escaping (ExportBatch) -> Bool, onSkipped: @escaping (SkippedElement) -> Void,
                     onProgress: (Int64) -> Void) throws(AppleExportError) -> Bool {
        let stream = try source.openDocument()
        let batcher = ExportBatcher(mapper: mapper, source: source, resumeAfter: resumeAfter, numbering: numbering,
                                    skipped: onSkipped, send: send)
        let reader = ExportDocumentReader(onExportDate: batcher.noteExportDate, emit: batcher.take)
        let parser = XMLStreamParser(handler: reader, name: source.documentName, restartRoot: "HealthData")
        var read: Int64 = 0
        try stream.forEachChunk { chunk in
            parser.feed(chunk)
            read += Int64(chunk.count)
            onProgress(read)
            return batcher.open
        }
        guard batcher.open else { return false }
        parser.finish()
        reader.documentEnded(atLine: parser.inputLines)
        controlCharacters = parser.controlCharacters
        batcher.finish()
        return batcher.open
    }
}
