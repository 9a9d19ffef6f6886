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

        // Migrations live at the top of the repository and are compiled into the binary.
        .executableTarget(name: "EmbedMigrationsTool"),
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["EmbedMigrationsTool"]),

        .target(name: "Postgres", dependencies: ["CLibPQ"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"]),
        // SHA-256 over libcrypto, for every module that hashes (tokens, bodies, files, migrations, demo ids).
        .target(name: "Hashing", dependencies: ["CCrypto"]),
        .target(name: "HealthPayload"),
        // libFuzzer harness for HealthPayload (scripts/fuzz-payload.sh); a corpus replayer without -DFUZZING.
        .executableTarget(name: "PayloadFuzzer", dependencies: ["HealthPayload"]),
        .target(name: "Warehouse", dependencies: ["Postgres", "HealthPayload", "Hashing"],
                plugins: ["EmbedMigrations"]),
        .target(name: "Receiver", dependencies: ["HTTPServer", "Warehouse", "HealthPayload", "Postgres"]),
        // The page under /ui (docs/ui.md): sessions, server-side SVG, reading the views as health_reader.
        .target(name: "WebUI", dependencies: ["HTTPServer", "Warehouse", "Postgres", "Hashing", "CZlib"]),
        .target(name: "Backlog", dependencies: ["Warehouse", "HealthPayload", "Postgres", "Hashing", "CZlib"]),
        // The Health app's export (export.zip, its folder, export.xml) read as a stream into the same pipeline.
        .target(name: "AppleExport", dependencies: ["CXML2", "CZip", "Warehouse", "HealthPayload", "Postgres", "Hashing", "Backlog"]),
        // Realistic demo bodies for `generate`, tests and benchmarks: pure, seeded, no I/O.
        .target(name: "DemoData", dependencies: ["HealthPayload", "Hashing"]),
        .executableTarget(name: "health-warehouse",
                          dependencies: ["Postgres", "Warehouse", "HealthPayload", "Receiver", "Backlog", "HTTPServer", "DemoData",
                                         "AppleExport", "WebUI"]),

        // Throwaway PostgreSQL clusters with migrated databases, the built binary as a child
        // process and a raw HTTP client: shared by the tests (through TestSupport) and the benchmarks.
        .target(name: "Harness", dependencies: ["Postgres", "Warehouse"]),

        // Benchmarks: figures next to a baseline measured in the same run (docs/benchmarks.md).
        .executableTarget(name: "health-warehouse-bench",
                          dependencies: ["Postgres", "Warehouse", "HealthPayload", "Backlog", "DemoData", "Harness", "AppleExport"],
                          path: "Sources/Benchmarks"),

        // Tests: a throwaway PostgreSQL cluster per run, a fresh database per test.
        // libyaml reads compose.yaml and the Grafana provisioning files in DeploymentTests.
        .systemLibrary(name: "CYAML", path: "Tests/CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .target(name: "TestSupport", dependencies: ["Harness", "DemoData", "HealthPayload", "Postgres", "Warehouse"], path: "Tests/TestSupport"),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "TestSupport"]),
        .testTarget(name: "HealthPayloadTests", dependencies: ["HealthPayload", "DemoData", "TestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"]),
        .testTarget(name: "WarehouseTests", dependencies: ["Warehouse", "Postgres", "HealthPayload", "DemoData", "TestSupport"]),
        .testTarget(name: "ReceiverTests", dependencies: ["Receiver", "Warehouse", "Postgres", "HTTPServer", "DemoData", "TestSupport"]),
        .testTarget(name: "BacklogTests", dependencies: ["Backlog", "DemoData", "Warehouse", "Postgres", "HealthPayload", "TestSupport",
                                                         "Receiver", "HTTPServer"]),
        // The export reader against a hand-written fixture and the real exports in ../shared/external.
        .testTarget(name: "AppleExportTests", dependencies: ["AppleExport", "DemoData", "Warehouse", "Postgres", "HealthPayload",
                                                             "Hashing", "TestSupport", "health-warehouse"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "CLITests", dependencies: ["Postgres", "Warehouse", "HealthPayload", "DemoData", "TestSupport", "health-warehouse"]),
        // compose.yaml, Dockerfile, Grafana provisioning and sql/ checked against a real database and the built binary.
        // The page (/ui) in headless Chromium lives here too: it needs the demo history (ui/*.py drive the browser).
        .testTarget(name: "DeploymentTests", dependencies: ["Postgres", "Warehouse", "TestSupport", "HealthPayload", "DemoData",
                                                            "health-warehouse", "CYAML"],
                    exclude: ["ui"]),
        .testTarget(name: "WebUITests", dependencies: ["WebUI", "Warehouse", "Postgres", "HTTPServer", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
