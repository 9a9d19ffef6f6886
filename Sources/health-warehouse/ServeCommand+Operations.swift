import Foundation
import HTTPServer
import Metrics
import Postgres
import Receiver

/// `serve`'s operating options (docs/operations.md, docs/exposing.md): the metrics listener and native TLS.
struct OperationsOptions {
    /// `--metrics-listen`: where `GET /metrics` is answered; nil for nowhere (the default).
    var metricsAddress: ListenAddress?
    /// `--metrics-per-person`: person names as labels.
    var metricsPerPerson: Bool
    /// `--tls-cert` and `--tls-key`: HTTPS on `--listen`.
    var tls: TLSFiles?

    static let optionNames: Set<String> = ["metrics-listen", "tls-cert", "tls-key"]
    static let flagNames: Set<String> = ["metrics-per-person"]

    static let help = """
          --metrics-listen ADDR  answer GET /metrics (Prometheus text format) on this address
                                 only, HOST:PORT or a bare PORT for 127.0.0.1:PORT (default:
                                 off); no credential, so keep it loopback or firewalled
          --metrics-per-person   also label samples and the last batch by person name
          --tls-cert FILE        serve HTTPS on --listen with this PEM certificate chain
          --tls-key FILE         and this PEM private key (both or neither); TLS 1.2 and 1.3,
                                 forward-secret suites only; SIGHUP re-reads both for new
                                 connections (a renewed certificate just works)
        """

    init(_ parsed: ParsedArguments, command: String) throws {
        if let text = parsed.value("metrics-listen") {
            let spelled = text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } ? "127.0.0.1:" + text : text
            do {
                metricsAddress = try ListenAddress.parse(spelled)
            } catch {
                throw UsageError(message: "--metrics-listen: \(error)", command: command)
            }
        }
        metricsPerPerson = parsed.has("metrics-per-person")
        if metricsPerPerson && metricsAddress == nil {
            throw UsageError(message: "--metrics-per-person labels the metrics of --metrics-listen, which is not given", command: command)
        }
        switch (parsed.value("tls-cert"), parsed.value("tls-key")) {
        case (nil, nil): tls = nil
        case (let cert?, let key?): tls = TLSFiles(certificatePath: cert, keyPath: key)
        default: throw UsageError(message: "--tls-cert and --tls-key go together: give both files or neither", command: command)
        }
    }

    /// The metrics listener's server: `GET /metrics` answered from `metrics`, anything else `404`;
    /// the same `Host` rule as the receiver's (`hostNames`).
    func metricsServer(_ metrics: ReceiverMetrics, hostNames: HostNames) -> HTTPServer? {
        guard let metricsAddress else { return nil }
        let configuration = HTTPServerConfiguration(address: metricsAddress, maxBodyBytes: 0, connectionLimit: 16,
                                                    perAddressConnectionLimit: 0, hostNames: hostNames,
                                                    onMisdirected: ServeCommand.logMisdirected)
        return HTTPServer(configuration: configuration) { request in
            guard request.path == "/metrics" else {
                return .json(status: 404, #"{"error":"only GET /metrics here"}"#)
            }
            guard request.method == "GET" || request.method == "HEAD" else {
                return .json(status: 405, #"{"error":"use GET"}"#, headers: [("Allow", "GET")])
            }
            return HTTPResponse(status: 200, headers: [("Content-Type", MetricsRegistry.contentType)],
                                body: Array(metrics.registry.render().utf8))
        }
    }

    /// When a batch or Stridee push was last stored, from the database (seconds since the
    /// epoch), for the metrics at start; nil when never or unknown. Each person's last receipt is
    /// on their row (`health_store.note_receipt`).
    static func lastBatch(_ pool: PostgresPool) -> Double? {
        try? pool.withConnection { connection in
            try connection.query("SELECT extract(epoch FROM max(last_received_at))::float8 FROM health_store.persons")
                .first?.decodeIfPresent(0, as: Double.self)
        } ?? nil
    }
}
