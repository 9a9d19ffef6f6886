import Foundation
import Testing
import TestSupport

/// The Dockerfile: a Swift build stage and a slim Debian runtime of the same release, and a
/// runtime that installs every shared library the binary links. The binary is the one this
/// test run built; its libraries are mapped to Debian packages with `dpkg -S`, exactly as the
/// runtime stage's apt-get must provide them.
@Suite("Dockerfile")
struct DockerfileTests {
    @Test("two stages: swift:6.3 on bookworm builds with a static Swift runtime, debian:bookworm-slim runs")
    func stages() throws {
        let dockerfile = try Dockerfile.load()
        #expect(dockerfile.stages.count == 2)
        let build = try #require(dockerfile.stages.first)
        let runtime = try #require(dockerfile.stages.last)
        #expect(build.from.hasPrefix("swift:6.3") && build.from.hasSuffix("-bookworm"), "\(build.from)")
        #expect(runtime.from == "debian:bookworm-slim")
        #expect(build.name == "build")
        for package in ["libpq-dev", "libmicrohttpd-dev", "zlib1g-dev", "libssl-dev"] {
            #expect(build.aptPackages.contains(package), "build stage installs \(package)")
        }
        let builds = Self.buildCommands(build)
        #expect(builds.count == 1)
        #expect(builds.first?.contains("-c release") == true)
        #expect(builds.first?.contains("--static-swift-stdlib") == true)
        #expect(runtime.arguments(of: "COPY").contains { $0.hasPrefix("--from=build ") && $0.hasSuffix("/usr/local/bin/health-warehouse") })
        #expect(runtime.arguments(of: "USER").first?.hasPrefix("warehouse") == true, "runs as an unprivileged user")
        #expect(runtime.arguments(of: "EXPOSE") == ["8080"])
        // Build output and secrets stay out of the build context.
        #expect(build.arguments(of: "COPY") == [". ."])
    }

    @Test("the classic builder and BuildKit both build it offline: base images from build args, no syntax directive to fetch, no BuildKit-only flags")
    func buildsWithoutBuildKit() throws {
        let dockerfile = try Dockerfile.load()
        #expect(dockerfile.directives.filter { $0.contains("syntax") }.isEmpty, "a syntax directive makes BuildKit pull a frontend image")
        #expect(dockerfile.stages.map(\.image) == ["${SWIFT_IMAGE}", "${RUNTIME_IMAGE}"])
        #expect(dockerfile.arguments["SWIFT_IMAGE"] == "swift:6.3-bookworm")
        #expect(dockerfile.arguments["RUNTIME_IMAGE"] == "debian:bookworm-slim")
        for stage in dockerfile.stages {
            for (keyword, arguments) in stage.instructions {
                #expect(!arguments.contains("<<"), "\(keyword): heredocs need BuildKit")
                for flag in ["--mount", "--chmod", "--link", "--security", "--network", "--parents", "--exclude"] {
                    #expect(!arguments.hasPrefix(flag), "\(keyword) \(flag) needs BuildKit")
                }
            }
        }
        // scripts/docker-base-images.sh makes the Swift image where it cannot be pulled, from this file.
        #expect(Repository.exists("deploy/docker/swift-toolchain.Dockerfile"))
        #expect(try Repository.text("scripts/docker-base-images.sh").contains("health-warehouse-swift:6.3-bookworm"))
    }

    /// The `swift build … --product health-warehouse` commands of a stage.
    static func buildCommands(_ stage: Dockerfile.Stage) -> [String] {
        stage.arguments(of: "RUN").flatMap { $0.components(separatedBy: "&&") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("swift build ") && $0.contains("--product health-warehouse") }
    }

    /// Libraries a binary needs at run time: its own NEEDED entries, plus those of the Swift
    /// runtime libraries it loads (with --static-swift-stdlib the Swift runtime is linked in,
    /// so its C++ runtime and unwinder become the binary's own needs).
    struct Linkage {
        /// soname → resolved path, for every library `ldd` lists.
        var resolved: [String: String] = [:]
        /// sonames the binary itself, or a Swift runtime library it loads, names as NEEDED
        /// (Swift runtime libraries themselves left out).
        var direct: Set<String> = []
        /// Swift runtime libraries (from the toolchain, not from a Debian package).
        var swiftRuntime: Set<String> = []
    }

    static func linkage(of binary: String) throws -> Linkage {
        var linkage = Linkage()
        let ldd = try Run.program("/usr/bin/ldd", [binary])
        guard ldd.status == 0 else { throw DeploymentTestError("ldd \(binary): \(ldd.output)") }
        for line in ldd.output.split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            if words.count >= 3, words[1] == "=>", words[2].hasPrefix("/") { linkage.resolved[words[0]] = words[2] }
            if words.first?.hasPrefix("/") == true { linkage.resolved[URL(fileURLWithPath: words[0]).lastPathComponent] = words[0] }
        }
        // A library of the Swift toolchain: under its runtime folder, owned by no Debian package.
        let toolchain = linkage.resolved.values.filter { $0.contains("/swift/linux/") }
        let toolchainOwners = try packages(owning: Array(toolchain))
        func isSwiftRuntime(_ path: String) -> Bool { toolchain.contains(path) && (toolchainOwners[path] ?? nil) == nil }
        var pending = [binary]
        var seen: Set<String> = []
        while let file = pending.popLast() {
            guard seen.insert(file).inserted else { continue }
            for soname in try needed(file) {
                guard let path = linkage.resolved[soname] else { throw DeploymentTestError("\(soname) needed by \(file) is not resolved by ldd") }
                if isSwiftRuntime(path) {
                    linkage.swiftRuntime.insert(soname)
                    pending.append(path)
                } else {
                    linkage.direct.insert(soname)
                }
            }
        }
        return linkage
    }

    static func needed(_ file: String) throws -> [String] {
        let out = try Run.program("/usr/bin/readelf", ["-d", "-W", file])
        guard out.status == 0 else { throw DeploymentTestError("readelf -d \(file): \(out.output)") }
        return out.output.split(separator: "\n").compactMap { line in
            guard line.contains("(NEEDED)"), let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else { return nil }
            return String(line[line.index(after: open)..<close])
        }
    }

    /// The Debian package that installed a file, trying the /lib ↔ /usr/lib spellings of
    /// merged-/usr systems and the symlink's target.
    static func package(owning path: String) throws -> String? {
        try packages(owning: [path])[path] ?? nil
    }

    /// `package(owning:)` for many files with one dpkg-query.
    static func packages(owning paths: [String]) throws -> [String: String?] {
        var candidates: [String: [String]] = [:]
        for path in paths {
            let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            var list = [path, real]
            for p in [path, real] { list.append(p.hasPrefix("/usr/") ? String(p.dropFirst(4)) : "/usr" + p) }
            candidates[path] = list
        }
        // dpkg-query -S prints `package: path` for each path it knows and complains about the
        // others (exit 1), so the lines are matched by path.
        let out = try Run.program("/usr/bin/dpkg-query", ["-S"] + Set(candidates.values.joined()).sorted())
        var owner: [String: String] = [:]
        for line in out.output.split(separator: "\n") where !line.hasPrefix("dpkg-query:") {
            guard let separator = line.range(of: ": /") else { continue }
            let file = String(line[line.index(before: separator.upperBound)...])
            owner[file] = String(line[..<separator.lowerBound].prefix { $0 != ":" && $0 != "," })
        }
        var result: [String: String?] = [:]
        for (path, list) in candidates { result[path] = list.lazy.compactMap { owner[$0] }.first }
        return result
    }

    /// What apt-get brings along with `packages`: their Depends and Pre-Depends, recursively
    /// (the first alternative of each), as installed on this Debian machine.
    static func closure(of packages: Set<String>) throws -> Set<String> {
        let out = try Run.program("/usr/bin/dpkg-query", ["-W", "-f", "${Package}\t${Pre-Depends}\t${Depends}\t${Provides}\n"])
        var depends: [String: [String]] = [:]
        var providers: [String: String] = [:]
        for line in out.output.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 4 else { continue }
            let names = (fields[1] + "," + fields[2]).split(separator: ",").compactMap { clause -> String? in
                let first = clause.split(separator: "|").first?.trimmingCharacters(in: .whitespaces) ?? ""
                let name = first.prefix { $0 != " " && $0 != "(" && $0 != ":" }
                return name.isEmpty ? nil : String(name)
            }
            depends[fields[0]] = names
            for provided in fields[3].split(separator: ",") {
                providers[String(provided.trimmingCharacters(in: .whitespaces).prefix { $0 != " " })] = fields[0]
            }
        }
        var result: Set<String> = []
        var pending = Array(packages)
        while let package = pending.popLast() {
            let real = depends[package] != nil ? package : (providers[package] ?? package)
            guard result.insert(real).inserted else { continue }
            pending += depends[real] ?? []
        }
        return result
    }

    /// The binary this test run built (the one CLIProcess runs), and the release one when the
    /// image's own build command was run here too.
    static var binaries: [String] {
        let release = URL(fileURLWithPath: CLIProcess.binaryPath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("release/health-warehouse").path
        return [CLIProcess.binaryPath] + (FileManager.default.isExecutableFile(atPath: release) ? [release] : [])
    }

    @Test("the runtime stage installs the Debian package of every shared library the binary links", arguments: binaries)
    func runtimeLibraries(binary: String) throws {
        let runtime = try #require(try Dockerfile.load().stages.last)
        let installed = Set(runtime.aptPackages)
        let linkage = try Self.linkage(of: binary)
        #expect(linkage.direct.contains("libpq.so.5") && linkage.direct.contains("libmicrohttpd.so.12"))
        // A binary that links the Swift runtime dynamically (a debug build) would need it in the
        // image: the build stage must link it statically.
        if !linkage.swiftRuntime.isEmpty {
            let build = try #require(try Dockerfile.load().stages.first)
            #expect(Self.buildCommands(build).allSatisfy { $0.contains("--static-swift-stdlib") } && !Self.buildCommands(build).isEmpty,
                    "\(binary) loads \(linkage.swiftRuntime.sorted()) from the toolchain")
        }
        // The C library is in every Debian image; everything else the binary itself needs is
        // installed by name.
        let always: Set<String> = ["libc6"]
        let owners = try Self.packages(owning: Array(linkage.resolved.values))
        var directPackages: Set<String> = []
        for soname in linkage.direct.sorted() {
            let path = try #require(linkage.resolved[soname])
            let package = try #require(owners[path] ?? nil, "\(soname) (\(path)) belongs to no Debian package")
            directPackages.insert(package)
            #expect(installed.contains(package) || always.contains(package),
                    "\(soname) comes from \(package): add it to the runtime stage's apt-get install")
        }
        #expect(directPackages.isSuperset(of: ["libpq5", "libmicrohttpd12", "zlib1g", "libssl3", "libstdc++6", "libgcc-s1"]))
        // Every library ldd resolves, transitive ones included, comes with what is installed.
        let available = try Self.closure(of: installed.union(always))
        for (soname, path) in linkage.resolved.sorted(by: { $0.key < $1.key }) where !linkage.swiftRuntime.contains(soname) {
            let package = try #require(owners[path] ?? nil, "\(soname) (\(path)) belongs to no Debian package")
            #expect(available.contains(package), "\(soname) from \(package) is not pulled in by \(installed.sorted())")
        }
        // Nothing installed for no reason but certificates.
        #expect(installed.subtracting(directPackages).subtracting(["ca-certificates"]).isEmpty,
                "installed but not linked: \(installed.subtracting(directPackages).sorted())")
    }
}
