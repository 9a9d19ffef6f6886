import CLibPQ

/// An error from libpq or the server, with the server's diagnostic fields when there are any.
///
/// `description` is safe to log: it never holds the connection string, a password or a
/// parameter value. The server's detail, hint and context (which can quote values) are kept
/// apart and shown only by `debugDescription`.
public struct PostgresError: Error, CustomStringConvertible, CustomDebugStringConvertible, Sendable {
    /// What went wrong, in broad strokes; decides how callers react.
    public enum Kind: Sendable, Equatable {
        /// The connection could not be opened.
        case connectionFailed
        /// An open connection broke (server gone, socket closed).
        case connectionLost
        /// The server rejected a statement; `sqlState` says why.
        case server
        /// A result could not be read as the type asked for.
        case decoding
        /// The pool had no connection to give within its wait limit.
        case poolTimeout
        /// The pool was closed.
        case poolClosed
        /// The connection broke after `COMMIT` was sent: the transaction may or may not have
        /// committed. Never replayed by the pool; the caller's client may send it again.
        case commitOutcomeUnknown
        /// libpq could not read the connection string (its text is never shown).
        case invalidConnectionString
        /// A parameter, or the number of them, is beyond what libpq can send.
        case parameterTooLarge
    }

    public var kind: Kind
    /// Five-character SQLSTATE (`23505` for a unique violation), when the server sent one.
    public var sqlState: String?
    /// The primary message.
    public var message: String
    /// The server's DETAIL, which may quote values: never logged.
    public var detail: String?
    /// The server's HINT.
    public var hint: String?
    /// The server's CONTEXT (where in a function it failed), which may quote values.
    public var context: String?
    /// The constraint involved, for integrity errors.
    public var constraint: String?

    public init(kind: Kind, sqlState: String? = nil, message: String, detail: String? = nil,
                hint: String? = nil, context: String? = nil, constraint: String? = nil) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.hint = hint
        self.context = context
        self.constraint = constraint
    }

    /// True when the database itself is the trouble (down, full, read-only, overloaded, busy,
    /// a serialization failure): the request may succeed later as it is.
    public var isTransient: Bool {
        switch kind {
        case .connectionFailed, .connectionLost, .poolTimeout, .poolClosed, .commitOutcomeUnknown: return true
        case .decoding, .invalidConnectionString, .parameterTooLarge: return false
        case .server:
            guard let state = sqlState else { return false }
            // 08 connection, 40 rollback (serialization, deadlock), 53 insufficient resources
            // (disk full, out of memory, too many connections), 57 operator intervention
            // (shutdown, and 57014 a statement_timeout), 58 system error (I/O), 25006 read-only
            // transaction, 55P03 a lock_timeout.
            return SQLState.troubleClasses.contains(String(state.prefix(2))) || state == SQLState.readOnlyTransaction || isTimeout
        }
    }

    /// True for a writer session's `lock_timeout` (55P03, lock_not_available) or
    /// `statement_timeout` (57014, query_canceled): the database is busy, not broken.
    public var isTimeout: Bool {
        kind == .server && (sqlState == SQLState.lockNotAvailable || sqlState == SQLState.queryCanceled)
    }

    public var description: String {
        var text: String
        switch kind {
        case .connectionFailed: text = "cannot connect to PostgreSQL: "
        case .connectionLost: text = "lost the connection to PostgreSQL: "
        case .server: text = "PostgreSQL error"
        case .decoding: text = "cannot read a PostgreSQL result: "
        case .poolTimeout: text = "no database connection free: "
        case .poolClosed: text = "the database pool is closed: "
        case .commitOutcomeUnknown: text = "lost the connection to PostgreSQL during COMMIT (the transaction may or may not have committed): "
        case .invalidConnectionString: text = "the database connection string is not valid: "
        case .parameterTooLarge: text = "cannot send a statement's parameters: "
        }
        if kind == .server {
            text += sqlState.map { " \($0): " } ?? ": "
            text += Self.redactingQuotedValues(message, sqlState: sqlState)
        } else {
            text += message
        }
        if let hint { text += " (hint: \(hint))" }
        return text
    }

    public var debugDescription: String {
        var text = description
        if let detail { text += "\nDETAIL: \(detail)" }
        if let context { text += "\nCONTEXT: \(context)" }
        return text
    }

    /// Data and integrity errors (classes 22 and 23) quote the offending value in their
    /// primary message, e.g. `invalid input syntax for type uuid: "…"`; keep the shape, drop
    /// the value.
    static func redactingQuotedValues(_ message: String, sqlState: String?) -> String {
        guard let state = sqlState, state.hasPrefix("22") || state.hasPrefix("23") else { return message }
        var out = ""
        var inQuote = false
        for ch in message {
            if ch == "\"" {
                out.append(inQuote ? "…\"" : "\"")
                inQuote.toggle()
            } else if !inQuote {
                out.append(ch)
            }
        }
        return out
    }

    /// Reads the diagnostic fields of a failed result.
    init(result: OpaquePointer, connectionOK: Bool) {
        func field(_ code: Int32) -> String? {
            guard let p = PQresultErrorField(result, code) else { return nil }
            return String(cString: p)
        }
        let state = field(CLibPQ_DIAG_SQLSTATE)
        var primary = field(CLibPQ_DIAG_MESSAGE_PRIMARY)
        if primary == nil, let p = PQresultErrorMessage(result) {
            primary = String(cString: p).trimmingTrailingNewlines()
        }
        self.init(kind: connectionOK ? .server : .connectionLost,
                  sqlState: state,
                  message: primary ?? "unknown error",
                  detail: field(CLibPQ_DIAG_MESSAGE_DETAIL),
                  hint: field(CLibPQ_DIAG_MESSAGE_HINT),
                  context: field(CLibPQ_DIAG_CONTEXT),
                  constraint: field(CLibPQ_DIAG_CONSTRAINT_NAME))
    }
}

extension String {
    /// libpq's lines as one (`… failed: Connection refused; Is the server running …`): a
    /// message printed on one line shows no escaped `\n\t`.
    func joiningLines() -> String {
        split(whereSeparator: { $0 == "\n" || $0 == "\r" })
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: "; ")
    }

    func trimmingTrailingNewlines() -> String {
        var s = Substring(self)
        while let last = s.last, last == "\n" || last == "\r" || last == " " { s = s.dropLast() }
        return String(s)
    }
}
