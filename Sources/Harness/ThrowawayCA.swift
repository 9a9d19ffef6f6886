import Foundation

/// A certificate authority made by `openssl` for one test run or benchmark, and server
/// certificates it signs for `localhost` and `127.0.0.1`: what `serve --tls-cert` is tested with.
public struct ThrowawayCA: Sendable {
    /// The folder holding every file made.
    public let directory: String
    /// The CA's certificate, for `curl --cacert` and `HTTPTestConnection`.
    public var certificatePath: String { directory + "/ca.pem" }

    /// Makes a CA (an EC P-256 key and a self-signed certificate) in a new temporary folder.
    public init() throws {
        directory = NSTemporaryDirectory() + "hw-ca-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                          "-keyout", directory + "/ca.key", "-out", directory + "/ca.pem", "-days", "2",
                          "-subj", "/CN=health-warehouse test CA"])
    }

    /// A server pair signed by this CA, as `NAME.pem` and `NAME.key`: valid for `days` (a
    /// negative number makes one that expired), for `localhost` and `127.0.0.1`, `keyType`
    /// `ec` (P-256) or `rsa` (2048 bits).
    @discardableResult
    public func issue(_ name: String, days: Int = 2, keyType: String = "ec") throws -> (certificate: String, key: String) {
        let base = directory + "/" + name
        let keyOptions = keyType == "rsa" ? ["-newkey", "rsa:2048"] : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
        try Self.openssl(["req", "-new", "-nodes"] + keyOptions + ["-keyout", base + ".key", "-out", base + ".csr", "-subj", "/CN=\(name)"])
        let extensions = base + ".ext"
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(toFile: extensions, atomically: true, encoding: .utf8)
        try Self.openssl(["x509", "-req", "-in", base + ".csr", "-CA", certificatePath, "-CAkey", directory + "/ca.key",
                          "-CAcreateserial", "-days", String(days), "-sha256", "-extfile", extensions, "-out", base + ".pem"])
        return (base + ".pem", base + ".key")
    }

    /// Removes every file made.
    public func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    static func openssl(_ arguments: [String]) throws {
        let output = try CLIProcess.runProgram("/usr/bin/openssl", arguments)
        guard output.status == 0 else {
            throw CLIProcessError(message: "openssl \(arguments.first ?? "") failed: \(output.stderr)")
        }
    }

    /// One CA and one current server pair (`server`) for the whole process, made on first use.
    public static let shared: Result<ThrowawayCA, Error> = Result {
        let ca = try ThrowawayCA()
        try ca.issue("server")
        return ca
    }
}
