import Foundation
import Testing
import TestSupport

/// The README's quick start, run as written: `serve` on the embedded PostgreSQL (what
/// `make run` starts), then the README's curl, then its psql line.
@Suite("README quick start")
struct ReadmeTests {
    static var readme: String {
        get throws {
            let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("README.md")
            return try String(contentsOf: url, encoding: .utf8)
        }
    }

    /// The shell commands of the README's "Prove it works" block, joined across `\` lines.
    static func quickStartCommands() throws -> [String] {
        let text = try readme
        let start = try #require(text.range(of: "Prove it works"))
        let block = try #require(text[start.upperBound...].range(of: "```sh\n"))
        let end = try #require(text[block.upperBound...].range(of: "```"))
        var commands: [String] = []
        var current = ""
        for line in text[block.upperBound..<end.lowerBound].split(separator: "\n") where !line.hasPrefix("#") {
            if line.hasSuffix("\\") {
                current += line.dropLast() + " "
            } else {
                commands.append(current + line)
                current = ""
            }
        }
        return commands
    }

    @Test("make run installs only what building and serving need, make test the rest; the README lists each set as the script does")
    func dependencySets() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        func listed(_ purpose: String) throws -> [String] {
            let out = try CLIProcess.runProgram("/bin/bash", [root.appendingPathComponent("scripts/install-deps.sh").path, purpose, "--list"])
            #expect(out.status == 0, "\(out.stderr)")
            return out.stdout.split(separator: "\n").map(String.init)
        }
        let run = try listed("run"), test = try listed("test")
        #expect(run == ["libpq-dev", "libmicrohttpd-dev", "zlib1g-dev", "libssl-dev", "libxml2-dev", "libzip-dev", "libgnutls28-dev", "postgresql"])
        for package in ["chromium", "chromium-driver", "prometheus", "libyaml-dev", "fonts-dejavu-core"] {
            #expect(!run.contains(package) && test.contains(package), "\(package) is the tests' only")
        }
        #expect(Set(run).isSubset(of: Set(test)))
        // The Makefile: run reaches only the run set, test the test set.
        let plan = { (target: String) in try CLIProcess.runProgram("/usr/bin/make", ["-n", "-C", root.path, target]).stdout }
        #expect(try plan("run").contains("install-deps.sh run\n") && !(try plan("run").contains("install-deps.sh test")))
        #expect(try plan("test").contains("install-deps.sh test\n"))
        // The README's prose, its line breaks and indents read as single spaces.
        let readme = try Self.readme.replacing(/\s+/, with: " ")
        #expect(readme.contains("`" + run.joined(separator: "`, `") + "`"), "the README names make run's packages")
        #expect(readme.contains("`" + test.filter { !run.contains($0) }.joined(separator: "`, `") + "`"), "and make test's others")
    }

    @Test("serve on the embedded cluster, the README's curl, then its psql line shows the sample in health.daily_summary, and /ui opens")
    func quickStart() throws {
        let commands = try Self.quickStartCommands()
        let curl = try #require(commands.first { $0.hasPrefix("curl ") })
        let psql = try #require(commands.first { $0.hasPrefix("psql ") })
        #expect(curl.contains("http://127.0.0.1:8080/"))
        #expect(try Self.readme.contains("make run "))

        let folder = NSTemporaryDirectory() + "hw-readme-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // `make run` runs `health-warehouse serve` in the checkout: data in ./health-warehouse-data.
        let serve = try CLIProcess.start(["serve", "--listen", "127.0.0.1:0"], directory: folder)
        defer {
            serve.signal(SIGTERM)
            _ = serve.wait()
        }
        #expect(serve.waitForStderr("serve.ready", timeout: 120), "\(serve.stderrSoFar)")
        let port = try #require(serve.stderrSoFar.firstMatch(of: /serve\.listening address=[^ ]*:(\d+)/)?.1)

        let posted = try shell(curl.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(port)"), in: folder)
        #expect(posted.status == 0, "\(posted.stderr)")
        #expect(posted.stdout.contains("\"inserted\":1"))

        let read = try shell(psql, in: folder)
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.contains("2026-08-21"))
        #expect(read.stdout.contains("42"))

        // The quick start ends with the page: open on loopback with no token, read as health_reader.
        #expect(try Self.readme.contains("open http://127.0.0.1:8080/ui"))
        let page = try HTTPTestClient.request(port: Int(port)!, path: "/ui")
        #expect(page.status == 200 && page.bodyText.contains("Signed in as <strong>default</strong>"), "\(page.status)")
        #expect(page.bodyText.contains("Last batch arrived"))
    }

    func shell(_ command: String, in folder: String) throws -> CLIProcess.Output {
        // Through the test helper's process runner, so stdout and stderr are captured apart.
        let script = folder + "/step.sh"
        try Data("cd '\(folder)' && \(command)\n".utf8).write(to: URL(fileURLWithPath: script))
        return try CLIProcess.runProgram("/bin/bash", [script])
    }
}
