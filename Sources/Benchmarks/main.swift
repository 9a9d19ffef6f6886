import Foundation

// health-warehouse-bench SECTION [options]: each section prints its figures next to a
// baseline measured in the same run. Run in release mode:
//   swift run -c release health-warehouse-bench receiver
let usage = """
    usage: health-warehouse-bench receiver|views|ingest|stridee|apple-export [options]
      receiver  1000-sample JSON and CSV batches over HTTP vs the same SQL without HTTP
      views     per-day views at ~10M samples vs plain views over the samples
      ingest    a generated backlog through `ingest` vs COPY of the same rows
      stridee   decoding Stridee workout and wellness bodies vs JSONSerialization of the same bytes
      apple-export  import-apple-health of a generated export.zip vs ingest of the same samples as JSON
    """
let arguments = Array(CommandLine.arguments.dropFirst())
guard let section = arguments.first else {
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(64)
}
let rest = Array(arguments.dropFirst())
do {
    switch section {
    case "receiver": try runReceiverBenchmark(rest)
    case "views": try runViewsBenchmark(rest)
    case "ingest": try runIngestBenchmark(rest)
    case "stridee": try runStrideeBenchmark(rest)
    case "apple-export": try runAppleExportBenchmark(rest)
    default:
        FileHandle.standardError.write(Data("error: unknown section \(section)\n\(usage)\n".utf8))
        exit(64)
    }
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
