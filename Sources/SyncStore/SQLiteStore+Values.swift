import Foundation
import SyncSQLite
import SyncWire

/// Conversions between JSON values and SQLite values, guided by a column's declared type.
enum ValueCoding {
    /// The SQLite value that stores `value` (the shared coding of ``SQLArgument``).
    static func sqliteValue(_ value: JSONValue) throws -> SQLiteValue {
        sqliteValue(try SQLArgument(json: value))
    }

    static func sqliteValue(_ argument: SQLArgument) -> SQLiteValue {
        switch argument {
        case .null: return .null
        case .integer(let i): return .integer(i)
        case .real(let d): return .real(d)
        case .text(let s): return .text(s)
        }
    }

    /// The JSON value for a stored value of a column declared as `type`.
    static func jsonValue(_ value: SQLiteValue, type: ColumnType?) -> JSONValue {
        switch value {
        case .null: return .null
        case .integer(let i): return JSONValue(sql: .integer(i), type: type)
        case .real(let d): return JSONValue(sql: .real(d), type: type)
        case .text(let s): return JSONValue(sql: .text(s), type: type)
        case .blob(let bytes): return .string(Data(bytes).base64EncodedString())
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
