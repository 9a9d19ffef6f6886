import Foundation
import Harness

// health-warehouse-bench SECTION [options]: each section prints its figures next to a
// baseline measured in the same run. Run in release mode:
//   swift run -c release health-warehouse-bench receiver
let usage = """
    usage: health-warehouse-bench receiver|views|ingest|stridee|apple-export|export-limits|ui|mcp|memory|metrics|tls|people|citus|hae [options] [--durability default|fast]
      receiver  1000-sample batches over HTTP through serve vs a bare one-statement upsert of the same
                bodies, the write path without HTTP and the reference's Node receiver; 1, 2 and 4 clients;
                then six-hour Stridee rides and 2,000-item wellness batches over HTTP vs StrideeStore
      views     per-day views at ~10M samples vs plain views over the samples
      ingest    a generated backlog through `ingest` vs COPY of the same rows
      stridee   decoding Stridee workout and wellness bodies vs JSONSerialization of the same bytes
      apple-export  import-apple-health of a generated export.zip vs ingest of the same samples as JSON
      export-limits the second audit's hostile exports (a huge attribute, comment, GPX <ele>; a route
                named 100 ways): seconds and peak RSS of import-apple-health, beside --baseline PATH
      ui        the page (GET /ui/days/365) at ~10M samples: serve's time, weight, first render in headless Chromium
      mcp       the assistant's tools day and summary(365 days) at ~1M samples (--samples 10000000 for the goal's size):
                the MCP server's own time and over HTTP, beside the plain daily_summary query
      memory    six 30 MiB workouts at once from one token: serve's resident memory before, at its peak, once settled
      metrics   probes/s with and without --metrics-listen, the cost of counting a request, a scrape with 1,000 persons
      tls       1000-sample batches and probes over HTTPS vs plain HTTP, handshake p50 (TLS 1.3, TLS 1.2)
      people    person export (samples/s, peak RSS) and person delete (seconds) of one person, beside pg_dump of the same rows
      citus     HTTP through serve with 4 clients for 4 persons, and one person's views, on a Citus coordinator
                (--citus-url URL) vs one PostgreSQL
      hae       a week of Health Auto Export minute buckets of every metric POSTed to /hae as one body vs the same
                readings as healthd samples in 1000-sample bodies to /: seconds, serve's peak RSS, day totals compared
      --durability  default: PostgreSQL's own settings (fsync on), what a user runs; fast: fsync off
    """
var arguments = Array(CommandLine.arguments.dropFirst())
guard let section = arguments.first else {
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(64)
}
arguments.removeFirst()
do {
    let durability = try DurabilityOption.take(from: &arguments)
    switch section {
    case "receiver": try runReceiverBenchmark(arguments, durability: durability)
    case "views": try runViewsBenchmark(arguments, durability: durability)
    case "ingest": try runIngestBenchmark(arguments, durability: durability)
    case "stridee": try runStrideeBenchmark(arguments, durability: durability)
    case "apple-export": try runAppleExportBenchmark(arguments, durability: durability)
    case "export-limits": try runExportLimitsBenchmark(arguments, durability: durability)
    case "ui": try runUIBenchmark(arguments, durability: durability)
    case "mcp": try runMCPBenchmark(arguments, durability: durability)
    case "memory": try runMemoryBenchmark(arguments, durability: durability)
    case "metrics": try runMetricsBenchmark(arguments, durability: durability)
    case "tls": try runTLSBenchmark(arguments, durability: durability)
    case "people": try runPeopleBenchmark(arguments, durability: durability)
    case "citus": try runCitusBenchmark(arguments, durability: durability)
    case "hae": try runHAEBenchmark(arguments, durability: durability)
    default:
        FileHandle.standardError.write(Data("error: unknown section \(section)\n\(usage)\n".utf8))
        exit(64)
    }
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
