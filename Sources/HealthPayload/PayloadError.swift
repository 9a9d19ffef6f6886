/// Why a body can never be accepted (the receiver answers `400`).
///
/// The problem, a reason and, where known, a location as fields: `description` puts them
/// together — `schemaVersion is 2; only 1 is accepted`, `record 4 (line 7): unterminated quoted
/// field`, `not valid JSON at byte 31 (line 3, column 8): unexpected value; expected a value` —
/// and never echoes more than a short, escaped snippet of the body, so it is safe to log. A
/// body that sits inside a larger file is located in that file with `shifted(by:)`.
public struct PayloadError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of problem it is.
    public enum Problem: Sendable, Equatable {
        /// Not RFC 8259 JSON (syntax, nesting, invalid UTF-8).
        case invalidJSON
        /// Not an RFC 4180 document in the reference's dialect (quoting, NUL, invalid UTF-8).
        case invalidCSV
        /// Well-formed, but not a healthd version 1 body (schemaVersion, envelope, header, field counts).
        case contract
        /// Would expand beyond what the decoder builds from a body of its size (a CSV header
        /// name too long, the samples built from it too large).
        case tooLarge
    }

    /// What kind of problem it is.
    public var problem: Problem
    /// What is wrong, without where (`unterminated quoted field`).
    public var reason: String
    /// Where in the body, when known.
    public var location: PayloadLocation?

    /// An error; `problem` defaults to `.contract`.
    public init(_ reason: String, problem: Problem = .contract, at location: PayloadLocation? = nil) {
        self.problem = problem
        self.reason = reason
        self.location = location
    }

    /// The human-readable message, safe to log and to return in `{"error": …}`: where, then what.
    public var message: String {
        guard let location else { return reason }
        return problem == .invalidJSON ? "not valid JSON at \(location): \(reason)" : "\(location): \(reason)"
    }

    /// The message.
    public var description: String { message }

    /// The same error located in a larger stream of `format` bodies that holds this body from
    /// `start` on; an error with no place of its own is put where the body starts
    /// (`body starting at record 11 (line 20)` in CSV, `line 20` in JSON lines).
    public func shifted(by start: PayloadLocation.Start, format: PayloadFormat) -> PayloadError {
        var shifted = self
        if let location {
            shifted.location = location.shifted(by: start)
        } else if format == .csv {
            shifted.location = PayloadLocation(record: start.records + 1, line: start.lines + 1, byteOffset: start.bytes, bodyStart: true)
        } else {
            shifted.location = PayloadLocation(line: start.lines + 1, byteOffset: start.bytes)
        }
        return shifted
    }
}

/// Where in a body (or in the file holding it) a problem is: a CSV record and its line, or a
/// byte with its line and column.
public struct PayloadLocation: Sendable, Equatable, CustomStringConvertible {
    /// The 1-based CSV record (blank lines counted), for a CSV document.
    public var record: Int?
    /// The 1-based line (LF, CRLF and a lone CR each end a line in CSV; LF in JSON).
    public var line: Int
    /// The 1-based column in bytes, where a JSON syntax error is.
    public var column: Int?
    /// The 0-based byte offset: of the record (CSV) or of the error (JSON).
    public var byteOffset: Int?
    /// True when this names where a body starts in a file, not a place inside the body.
    public var bodyStart: Bool

    /// A location.
    public init(record: Int? = nil, line: Int, column: Int? = nil, byteOffset: Int? = nil, bodyStart: Bool = false) {
        self.record = record
        self.line = line
        self.column = column
        self.byteOffset = byteOffset
        self.bodyStart = bodyStart
    }

    /// What comes before a body in its stream: records, line terminators and bytes.
    public struct Start: Sendable, Equatable {
        /// CSV records before the body.
        public var records: Int
        /// Line terminators before the body (the body starts on line `lines + 1`).
        public var lines: Int
        /// Bytes before the body.
        public var bytes: Int

        /// A body that starts after `records` CSV records, `lines` line terminators and `bytes` bytes.
        public init(records: Int, lines: Int, bytes: Int) {
            self.records = records
            self.lines = lines
            self.bytes = bytes
        }
    }

    /// The same place counted from the start of a larger stream.
    public func shifted(by start: Start) -> PayloadLocation {
        var shifted = self
        shifted.record = record.map { $0 + start.records }
        shifted.line = line + start.lines
        // Bodies start at the start of a line, so a column stays as it is.
        shifted.byteOffset = byteOffset.map { $0 + start.bytes }
        return shifted
    }

    /// `record 4 (line 7)`, `byte 31 (line 3, column 8)`, `line 3`; `body starting at record 11 (line 20)`.
    public var description: String {
        let place: String
        if let record {
            place = "record \(record) (line \(line))"
        } else if let byteOffset, let column {
            place = "byte \(byteOffset) (line \(line), column \(column))"
        } else {
            place = "line \(line)"
        }
        return bodyStart ? "body starting at " + place : place
    }
}
