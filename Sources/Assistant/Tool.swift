import HealthPayload

/// One tool of the MCP server: what `tools/list` says of it and what `tools/call` runs.
struct Tool: Sendable {
    /// The name a client calls it by.
    var name: String
    /// A short title for people.
    var title: String
    /// What it answers, for the assistant choosing a tool.
    var description: String
    /// Its arguments, every one required: name, then the JSON Schema of its value.
    var arguments: [(name: String, schema: JSONValue)]
    /// The JSON Schema of its `structuredContent`.
    var outputSchema: JSONValue
    /// Reads the answer for a person: the `structuredContent`.
    var run: @Sendable (ToolArguments, String) throws -> JSONValue

    /// The tool as `tools/list` gives it.
    var listing: JSONValue {
        .object([
            ("name", .string(name)), ("title", .string(title)), ("description", .string(description)),
            ("inputSchema", .object([
                ("type", .string("object")),
                ("properties", .object(arguments.map { ($0.name, $0.schema) })),
                ("required", .array(arguments.map { .string($0.name) })),
                ("additionalProperties", .bool(false)),
            ])),
            ("outputSchema", outputSchema),
            ("annotations", .object([
                ("title", .string(title)), ("readOnlyHint", .bool(true)), ("destructiveHint", .bool(false)),
                ("idempotentHint", .bool(true)), ("openWorldHint", .bool(false)),
            ])),
        ])
    }
}

/// JSON Schema pieces the tools' listings share.
enum Schema {
    /// A string argument with a description (and a format, or a list of allowed values).
    static func string(_ description: String, format: String? = nil, among choices: [String]? = nil) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("type", .string("string"))]
        if let format { members.append(("format", .string(format))) }
        if let choices { members.append(("enum", .array(choices.map { .string($0) }))) }
        members.append(("description", .string(description)))
        return .object(members)
    }

    /// `from` and `to`, the person's local days, inclusive.
    static let range: [(name: String, schema: JSONValue)] = [
        ("from", string("First local day, YYYY-MM-DD (inclusive).", format: "date")),
        ("to", string("Last local day, YYYY-MM-DD (inclusive); at most \(ToolArguments.maxDays) days after from.", format: "date")),
    ]

    /// `{"person": P, "rows": [row…]}`.
    static func rows(_ row: JSONValue) -> JSONValue {
        .object([
            ("type", .string("object")),
            ("properties", .object([
                ("person", .object([("type", .string("string")), ("description", .string("Whose data: the person this server reads for."))])),
                ("rows", .object([("type", .string("array")), ("items", row)])),
            ])),
            ("required", .array([.string("person"), .string("rows")])),
        ])
    }

    /// An array of `row`.
    static func list(_ row: JSONValue) -> JSONValue {
        .object([("type", .string("array")), ("items", row)])
    }

    /// `row`, or `null`.
    static func optional(_ row: JSONValue) -> JSONValue {
        .object([("anyOf", .array([row, .object([("type", .string("null"))])]))])
    }

    /// A value of a JSON type with a description.
    static func typed(_ type: String, _ description: String, nullable: Bool = false, format: String? = nil) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("type", nullable ? .array([.string(type), .string("null")]) : .string(type))]
        if let format { members.append(("format", .string(format))) }
        members.append(("description", .string(description)))
        return .object(members)
    }
}
