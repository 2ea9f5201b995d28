/// A value bound to a statement parameter or read from a result column: the one value type of
/// every SQL engine CipherSync talks to.
///
/// The cases are SQLite's storage classes, which every engine can hold. A JSON value becomes an
/// `SQLValue` once (``init(json:)``) and is bound as it is: the local store's `SyncSQLite`
/// statements bind it directly, and a server storage maps it to its driver's value at the call.
/// Reading back, `JSONValue(sql:type:)` turns a column's value into JSON again.
/// JSON never becomes a blob; a blob found in a column (written by another program) reads back
/// as base64 text.
public enum SQLValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An 8-byte IEEE floating-point number.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes.
    case blob([UInt8])

    /// The integer, if this is an integer.
    public var integerValue: Int64? {
        if case .integer(let i) = self { return i }
        return nil
    }

    /// The text, if this is text.
    public var textValue: String? {
        if case .text(let s) = self { return s }
        return nil
    }

    /// The real, if this is a real or an integer.
    public var realValue: Double? {
        switch self {
        case .real(let d): return d
        case .integer(let i): return Double(i)
        default: return nil
        }
    }
}

extension SQLValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByNilLiteral {
    /// Text.
    public init(stringLiteral value: String) { self = .text(value) }
    /// An integer.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// `NULL`.
    public init(nilLiteral: ()) { self = .null }
}
