import Dispatch
import HealthPayload
import Warehouse

/// The Model Context Protocol over JSON-RPC 2.0, whatever carries it (stdio lines or HTTP
/// bodies): `initialize`, `ping`, `tools/list`, `tools/call`, `resources/list`,
/// `resources/templates/list` and `resources/read`; notifications get no answer. Every call
/// reads for the person its transport names, never one an argument names.
public final class MCPServer: Sendable {
    /// The protocol revisions spoken, newest first: a client asking for one of them gets it,
    /// any other gets the newest.
    public static let protocolVersions = ["2025-11-25", "2025-06-18", "2025-03-26"]
    /// The one resource.
    static let viewsURI = "health://views"

    let toolbox: Toolbox
    let version: String

    /// A server offering `toolbox`; `version` is the warehouse's, for `serverInfo`.
    public init(toolbox: Toolbox, version: String) {
        self.toolbox = toolbox
        self.version = version
    }

    /// The revision to speak with a client that asked for `requested`.
    public static func negotiate(_ requested: String?) -> String {
        requested.flatMap { protocolVersions.contains($0) ? $0 : nil } ?? protocolVersions[0]
    }

    /// The answer to one message's bytes: a response, an array of them for a batch, or nil
    /// when nothing is due (notifications and responses alone).
    public func answer(bytes: [UInt8], person: String) -> JSONValue? {
        let message: JSONValue
        do {
            message = try JSONValue.parse(bytes)
        } catch {
            return JSONRPC.error(id: .null, code: JSONRPC.parseError, "Parse error: \(error.message)")
        }
        return answer(message, person: person)
    }

    /// The answer to one parsed message (or a batch of them, which the 2025-03-26 revision allows).
    public func answer(_ message: JSONValue, person: String) -> JSONValue? {
        if case .array(let batch) = message {
            guard !batch.isEmpty else { return JSONRPC.error(id: .null, code: JSONRPC.invalidRequest, "Invalid Request: an empty batch") }
            let answers = batch.compactMap { answer($0, person: person) }
            return answers.isEmpty ? nil : .array(answers)
        }
        guard case .object = message else { return JSONRPC.error(id: .null, code: JSONRPC.invalidRequest, "Invalid Request: not an object") }
        let id = message["id"]
        guard let method = message["method"]?.stringValue else {
            // A response to a request of ours (we send none), or nothing JSON-RPC knows.
            return message["result"] != nil || message["error"] != nil ? nil
                : JSONRPC.error(id: id ?? .null, code: JSONRPC.invalidRequest, "Invalid Request: no method")
        }
        guard let id else { return nil } // a notification: initialized, cancelled, progress…
        do {
            return JSONRPC.result(id: id, try call(method, message["params"], person: person))
        } catch let error as JSONRPC.Failure {
            return JSONRPC.error(id: id, code: error.code, error.message, data: error.data)
        } catch {
            return JSONRPC.error(id: id, code: JSONRPC.internalError, "Internal error: \(error)")
        }
    }

    func call(_ method: String, _ params: JSONValue?, person: String) throws -> JSONValue {
        switch method {
        case "initialize":
            return initializeResult(params?["protocolVersion"]?.stringValue)
        case "ping":
            return .object([])
        case "tools/list":
            return .object([("tools", .array(toolbox.tools.map(\.listing)))])
        case "tools/call":
            guard let name = params?["name"]?.stringValue else { throw JSONRPC.Failure(JSONRPC.invalidParams, "tools/call needs params.name") }
            guard let tool = toolbox.tool(name) else { throw JSONRPC.Failure(JSONRPC.invalidParams, "Unknown tool: \(name)") }
            return run(tool, params?["arguments"], person: person)
        case "resources/list":
            return .object([("resources", .array([viewsResource]))])
        case "resources/templates/list":
            return .object([("resourceTemplates", .array([]))])
        case "resources/read":
            let uri = params?["uri"]?.stringValue
            guard uri == Self.viewsURI else {
                throw JSONRPC.Failure(JSONRPC.resourceNotFound, "Resource not found", data: .object([("uri", .string(uri ?? ""))]))
            }
            return .object([("contents", .array([.object([
                ("uri", .string(Self.viewsURI)), ("mimeType", .string("text/markdown")), ("text", .string(toolbox.reader.catalog.markdown)),
            ])]))])
        default:
            throw JSONRPC.Failure(JSONRPC.methodNotFound, "Method not found: \(method)")
        }
    }

    func initializeResult(_ requested: String?) -> JSONValue {
        .object([
            ("protocolVersion", .string(Self.negotiate(requested))),
            ("capabilities", .object([
                ("tools", .object([("listChanged", .bool(false))])),
                ("resources", .object([("subscribe", .bool(false)), ("listChanged", .bool(false))])),
            ])),
            ("serverInfo", .object([("name", .string("health-warehouse")), ("title", .string("Health Warehouse")), ("version", .string(version))])),
            ("instructions", .string("""
                Apple Health data of one person, per local day, exactly as the warehouse's views count it: a total is \
                one source's (the phone and the watch are never added up), what Health coalesced or deleted counts \
                nowhere, a day without data has no row (no data is not zero), and today is partial. Start with \
                summary or day; metrics lists the metric names; the resource health://views explains every column.
                """)),
        ])
    }

    var viewsResource: JSONValue {
        .object([
            ("uri", .string(Self.viewsURI)), ("name", .string("views")), ("title", .string("The health views")),
            ("description", .string("Every view of schema health with its columns and what they mean (their COMMENTs).")),
            ("mimeType", .string("text/markdown")),
        ])
    }

    /// A tool's result: `structuredContent`, the same as text, and `isError` with a message
    /// naming the argument when an argument (or the database) is wrong.
    func run(_ tool: Tool, _ arguments: JSONValue?, person: String) -> JSONValue {
        let started = DispatchTime.now().uptimeNanoseconds
        let outcome = Result { try tool.run(try ToolArguments(arguments, allowed: tool.arguments.map(\.name)), person) }
        let ms = Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        switch outcome {
        case .success(let content):
            Log.event("mcp.call", ["tool": tool.name, "person": person, "ms": ms])
            return .object([
                ("content", .array([.object([("type", .string("text")), ("text", .string(content.text))])])),
                ("structuredContent", content), ("isError", .bool(false)),
            ])
        case .failure(let error):
            let message = error is ArgumentError ? "\(error)" : "the warehouse's database could not answer: \(error)"
            Log.event("mcp.call", ["tool": tool.name, "person": person, "ms": ms, "error": message])
            return .object([
                ("content", .array([.object([("type", .string("text")), ("text", .string(message))])])), ("isError", .bool(true)),
            ])
        }
    }
}

/// JSON-RPC 2.0 answers and error codes (the specification's, and MCP's `-32002`).
enum JSONRPC {
    static let parseError = -32700
    static let invalidRequest = -32600
    static let methodNotFound = -32601
    static let invalidParams = -32602
    static let internalError = -32603
    static let resourceNotFound = -32002

    /// A request's failure, answered as a JSON-RPC error.
    struct Failure: Error {
        var code: Int
        var message: String
        var data: JSONValue?

        init(_ code: Int, _ message: String, data: JSONValue? = nil) {
            self.code = code
            self.message = message
            self.data = data
        }
    }

    static func result(id: JSONValue, _ result: JSONValue) -> JSONValue {
        .object([("jsonrpc", .string("2.0")), ("id", id), ("result", result)])
    }

    static func error(id: JSONValue, code: Int, _ message: String, data: JSONValue? = nil) -> JSONValue {
        var error: [(key: String, value: JSONValue)] = [("code", .number(String(code))), ("message", .string(message))]
        if let data { error.append(("data", data)) }
        return .object([("jsonrpc", .string("2.0")), ("id", id), ("error", .object(error))])
    }
}
