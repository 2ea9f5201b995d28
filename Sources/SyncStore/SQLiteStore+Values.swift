import Foundation
import SyncSQL
import SyncWire

/// The values of the system tables' columns (the operation queue, its errors, the config).
/// Items' values use the shared coding of SyncSQL (`SQLValue(json:)`, `JSONValue(sql:type:)`).
enum ValueCoding {
    /// Encodes an optional object as JSON text for a system-table column.
    static func text(_ object: JSONObject?) throws -> SQLValue {
        guard let object else { return .null }
        return .text(try JSONCoding.string(object))
    }

    /// Decodes an optional object from a system-table column.
    static func object(_ value: SQLValue) -> JSONObject? {
        guard let text = value.textValue else { return nil }
        return try? JSONCoding.object(from: text)
    }

    static func dateText(_ date: Date) -> SQLValue { .text(WireDate.string(from: date)) }

    static func date(_ value: SQLValue) -> Date {
        value.textValue.flatMap(WireDate.date(from:)) ?? WireDate.epoch
    }
}
