import Foundation
import SyncSQLite
import SyncWire

/// Conversions between JSON values and SQLite values, guided by a column's declared type.
enum ValueCoding {
    /// The SQLite value that stores `value`.
    static func sqliteValue(_ value: JSONValue) throws -> SQLiteValue {
        switch value {
        case .null: return .null
        case .bool(let b): return .integer(b ? 1 : 0)
        case .int(let i): return .integer(i)
        case .double(let d): return .real(d)
        case .string(let s): return .text(s)
        case .array, .object: return .text(String(decoding: try JSONCoding.encode(value), as: UTF8.self))
        }
    }

    /// The JSON value for a stored value of a column declared as `type`.
    static func jsonValue(_ value: SQLiteValue, type: ColumnType?) -> JSONValue {
        switch (value, type) {
        case (.null, _): return .null
        case (.integer(let i), .boolean): return .bool(i != 0)
        case (.integer(let i), .real): return .double(Double(i))
        case (.integer(let i), _): return .int(i)
        case (.real(let d), _): return .double(d)
        case (.text(let s), .json):
            return (try? JSONCoding.decode(JSONValue.self, from: Data(s.utf8))) ?? .string(s)
        case (.text(let s), _): return .string(s)
        case (.blob(let bytes), _): return .string(Data(bytes).base64EncodedString())
        }
    }

    /// Encodes an optional object as JSON text for a system-table column.
    static func text(_ object: JSONObject?) throws -> SQLiteValue {
        guard let object else { return .null }
        return .text(try JSONCoding.string(object))
    }

    /// Decodes an optional object from a system-table column.
    static func object(_ value: SQLiteValue) -> JSONObject? {
        guard let text = value.textValue else { return nil }
        return try? JSONCoding.object(from: text)
    }

    static func dateText(_ date: Date) -> SQLiteValue { .text(WireDate.string(from: date)) }

    static func date(_ value: SQLiteValue) -> Date {
        value.textValue.flatMap(WireDate.date(from:)) ?? WireDate.epoch
    }
}
