// swift-tools-version:6.0
import PackageDescription

// Modules and their one-way dependencies are described in docs/architecture.md.
let package = Package(
    name: "health-warehouse",
    products: [
        .executable(name: "health-warehouse", targets: ["health-warehouse"]),
    ],
    targets: [
        // C libraries from Debian, reached through system-library targets or small shims.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CZip", pkgConfig: "libzip", providers: [.apt(["libzip-dev"])]),
        .target(name: "CMicroHTTPD", linkerSettings: [.linkedLibrary("microhttpd")]),
        // The TLS pair for libmicrohttpd's own TLS (GnuTLS): checked at start, swapped on SIGHUP.
        .target(name: "CGnuTLS", linkerSettings: [.linkedLibrary("gnutls")]),

        // Migrations live at the top of the repository and are compiled into the binary.
        .executableTarget(name: "EmbedMigrationsTool"),
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["EmbedMigrationsTool"]),

        // Calendar dates and day counts, converted in one place (timestamps, PostgreSQL's text forms, demo data).
        .target(name: "Civil"),
        .target(name: "Postgres", dependencies: ["CLibPQ", "Civil"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "CGnuTLS"]),
        // Prometheus' text exposition: counters, gauges read at scrape, histograms, process_* from /proc.
        .target(name: "Metrics"),
        // SHA-256 over libcrypto, for every module that hashes (tokens, bodies, files, migrations, demo ids).
        .target(name: "Hashing", dependencies: ["CCrypto"]),
        .target(name: "HealthPayload", dependencies: ["Civil", "Hashing"]),
        // libFuzzer harness for HealthPayload (scripts/fuzz-payload.sh); a corpus replayer without -DFUZZING.
        .executableTarget(name: "PayloadFuzzer", dependencies: ["HealthPayload", "FuzzSupport"]),
        // What the fuzzers share: the PostgreSQL-safety check, the replayer, libFuzzer's driver.
        .target(name: "FuzzSupport"),
        .target(name: "Warehouse", dependencies: ["Postgres", "HealthPayload", "Hashing"],
                plugins: ["EmbedMigrations"]),
        .target(name: "Receiver", dependencies: ["HTTPServer", "Warehouse", "HealthPayload", "Postgres", "Hashing", "Metrics"]),
        // The page under /ui (docs/ui.md): sessions, server-side SVG, reading the views as health_reader.
        .target(name: "WebUI", dependencies: ["HTTPServer", "Warehouse", "Postgres", "Hashing", "CZlib", "Civil"]),
        // The assistant's MCP server (docs/assistant.md): the protocol, its tools over the views read as
        // health_reader, the stdio transport and Streamable HTTP at /mcp.
        .target(name: "Assistant", dependencies: ["HTTPServer", "Warehouse", "Postgres", "HealthPayload", "Receiver", "WebUI", "Civil"]),
        // Backlog files read into healthd batches (walked, inflated, split, decoded); no database
        // (Warehouse only for the ledger's value types).
        .target(name: "Backlog", dependencies: ["Warehouse", "HealthPayload", "Hashing", "CZlib"]),
        // The Health app's export (export.zip, its folder, export.xml) read as a stream into batches: a pure reader.
        .target(name: "AppleExport", dependencies: ["CXML2", "CZip", "HealthPayload", "Hashing"]),
        // libFuzzer harness for the export reader (scripts/fuzz-payload.sh too); a corpus replayer without -DFUZZING.
        .executableTarget(name: "ExportFuzzer", dependencies: ["AppleExport", "HealthPayload", "FuzzSupport"]),
        // The one pipeline of the ways in that read files (ingest, import-apple-health): reading thread,
        // bounded queue, groups of batches per transaction, the ledger.
        .target(name: "Pipeline", dependencies: ["Warehouse", "Backlog", "AppleExport", "HealthPayload", "Postgres", "Hashing"]),
        // Realistic demo bodies for `generate`, tests and benchmarks: pure, seeded, no I/O.
        .target(name: "DemoData", dependencies: ["HealthPayload", "Hashing", "Civil"]),
        .executableTarget(name: "health-warehouse",
                          dependencies: ["Postgres", "Warehouse", "HealthPayload", "Receiver", "Backlog", "HTTPServer", "DemoData", "Metrics",
                                         "AppleExport", "Pipeline", "Hashing", "Civil", "WebUI", "Assistant"]),

        // Throwaway PostgreSQL clusters with migrated databases, the built binary as a child
        // process and a raw HTTP client: shared by the tests (through TestSupport) and the benchmarks.
        .target(name: "Harness", dependencies: ["Postgres", "Warehouse", "CGnuTLS"]),

        // Benchmarks: figures next to a baseline measured in the same run (docs/benchmarks.md).
        .executableTarget(name: "health-warehouse-bench",
                          dependencies: ["Postgres", "Warehouse", "HealthPayload", "Backlog", "DemoData", "Harness", "AppleExport",
                                         "Pipeline", "Hashing", "Civil", "Receiver", "HTTPServer", "Assistant"],
                          path: "Sources/Benchmarks"),

        // Tests: a throwaway PostgreSQL cluster per run, a fresh database per test.
        // libyaml reads compose.yaml and the Grafana provisioning files in DeploymentTests.
        .systemLibrary(name: "CYAML", path: "Tests/CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .target(name: "TestSupport", dependencies: ["Harness", "DemoData", "HealthPayload", "Postgres", "Warehouse"], path: "Tests/TestSupport"),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "TestSupport", "Civil"]),
        .testTarget(name: "HealthPayloadTests", dependencies: ["HealthPayload", "DemoData", "TestSupport", "Civil", "FuzzSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"]),
        .testTarget(name: "WarehouseTests", dependencies: ["Warehouse", "Postgres", "HealthPayload", "DemoData", "TestSupport", "Hashing", "Civil"]),
        .testTarget(name: "ReceiverTests", dependencies: ["Receiver", "Warehouse", "Postgres", "HTTPServer", "DemoData", "TestSupport", "Metrics",
                                                          "HealthPayload"]),
        .testTarget(name: "BacklogTests", dependencies: ["Backlog", "Pipeline", "DemoData", "Warehouse", "Postgres", "HealthPayload",
                                                         "TestSupport", "Receiver", "HTTPServer", "Hashing", "Civil"]),
        // The export reader against a hand-written fixture and the real exports in ../shared/external.
        .testTarget(name: "AppleExportTests", dependencies: ["AppleExport", "Pipeline", "DemoData", "Warehouse", "Postgres", "HealthPayload", "Civil",
                                                             "Hashing", "TestSupport", "health-warehouse"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "CLITests", dependencies: ["Postgres", "Warehouse", "HealthPayload", "DemoData", "TestSupport", "health-warehouse", "Hashing"]),
        // compose.yaml, Dockerfile, Grafana provisioning and sql/ checked against a real database and the built binary.
        // The page (/ui) in headless Chromium lives here too: it needs the demo history (ui/*.py drive the browser).
        .testTarget(name: "DeploymentTests", dependencies: ["Postgres", "Warehouse", "TestSupport", "HealthPayload", "DemoData", "Hashing", "Civil",
                                                            "health-warehouse", "CYAML"],
                    exclude: ["ui", "mcp"]),
        .testTarget(name: "WebUITests", dependencies: ["WebUI", "Warehouse", "Postgres", "HTTPServer", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
