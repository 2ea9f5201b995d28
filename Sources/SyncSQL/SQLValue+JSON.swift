import Foundation
public import SyncWire

/// How JSON values are stored in SQL columns and read back, shared by the local store and the
/// server so an item round-trips the same way in both.
extension SQLValue {
    /// The SQL value that stores `value`: Booleans as 0/1, objects and arrays as JSON text.
    ///
    /// - Parameter value: A property of an item.
    /// - Throws: An `EncodingError` when an object or array cannot be encoded as JSON text.
    public init(json value: JSONValue) throws {
        switch value {
        case .null: self = .null
        case .bool(let b): self = .integer(b ? 1 : 0)
        case .int(let i): self = .integer(i)
        case .double(let d): self = .real(d)
        case .string(let s): self = .text(s)
        case .array, .object: self = .text(String(decoding: try JSONCoding.encode(value), as: UTF8.self))
        }
    }
}

extension JSONValue {
    /// The JSON value of a stored SQL value, read through the column's declared type.
    ///
    /// A blob (never written by CipherSync) reads back as its base64 text.
    ///
    /// - Parameters:
    ///   - value: The column's value in one row.
    ///   - type: The column's declared type, or `nil` when unknown.
    public init(sql value: SQLValue, type: ColumnType?) {
        switch (value, type) {
        case (.null, _): self = .null
        case (.integer(let i), .boolean): self = .bool(i != 0)
        case (.integer(let i), .real): self = .double(Double(i))
        case (.integer(let i), _): self = .int(i)
        case (.real(let d), _): self = .double(d)
        case (.text(let s), .json): self = (try? JSONCoding.decode(JSONValue.self, from: Data(s.utf8))) ?? .string(s)
        case (.text(let s), _): self = .string(s)
        case (.blob(let bytes), _): self = .string(Data(bytes).base64EncodedString())
        }
    }
}
