public import SyncWire

/// How a JSON property is stored in a SQL column, shared by the local store and the server so
/// that a value reads back as the JSON it was written as.
public enum ColumnType: String, Sendable, Hashable, CaseIterable, Codable {
    /// A string (also timestamps, which are fixed-width ISO 8601 text).
    case text = "TEXT"
    /// An integer.
    case integer = "INTEGER"
    /// A real number.
    case real = "REAL"
    /// A Boolean, stored as 0 or 1.
    case boolean = "BOOLEAN"
    /// An object or array, stored as JSON text.
    case json = "JSON"

    /// The column type a value would create, or `nil` for `null` (no type can be inferred).
    public init?(inferringFrom value: JSONValue) {
        switch value {
        case .null: return nil
        case .bool: self = .boolean
        case .int: self = .integer
        case .double: self = .real
        case .string: self = .text
        case .array, .object: self = .json
        }
    }

    /// The column type named by a declared SQL type, as read back from a schema.
    public init?(declared: String) {
        self.init(rawValue: declared.uppercased())
    }
}
