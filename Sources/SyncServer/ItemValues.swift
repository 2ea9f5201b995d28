import Foundation
import SyncSQL
import SyncWire

/// The checks of an item's properties before anything is written: reserved names, names and
/// their columns, and values that fit the columns they go to.
enum ItemValues {
    /// The system columns a client may not send.
    static func checkReserved(_ item: JSONObject) throws(TableError) {
        for key in item.keys where isReserved(key) {
            throw .badRequest("Cannot update item with property '\(key)' as it is reserved")
        }
    }

    private static func isReserved(_ key: String) -> Bool {
        // An ASCII name of another length than theirs is none of them (ASCII folding keeps lengths).
        let bytes = key.utf8
        if !reservedLengths.contains(bytes.count), bytes.allSatisfy({ $0 < 0x80 }) { return false }
        return SystemProperty.reserved.contains { CaseInsensitive.equal($0, key) }
    }

    private static let reservedLengths = SystemProperty.reserved.map(\.utf8.count)

    /// The columns an item needs, typed from its values; property names must be plain names,
    /// and no two may name one column (SQLite ignores the case of ASCII letters in names).
    static func columns(of item: JSONObject) throws(TableError) -> [String: ColumnType] {
        guard item.count <= 500 else { throw .badRequest("An item may have at most 500 properties") }
        if let (a, b) = ColumnIndex.clash(in: Set(item.keys).union([SystemProperty.id, SystemProperty.version])) {
            throw .badRequest("The properties '\(a.prefix(64))' and '\(b.prefix(64))' differ only by case")
        }
        var columns: [String: ColumnType] = [:]
        for (name, value) in item where name != SystemProperty.id && name != SystemProperty.version {
            guard ODataParser.isName(name) else { throw .badRequest("'\(name.prefix(64))' is not a valid property name") }
            if let type = ColumnType(inferringFrom: value) { columns[name] = type }
        }
        return columns
    }

    /// The columns an item needs (``columns(of:)``), to be checked against `schema`, its table's;
    /// none when every property is spelled exactly as a column of `schema` (and is a plain name):
    /// such names cannot clash and need no column, so a write with the table's own names (a batch
    /// of them, typically) skips folding every name again.
    static func columns(of item: JSONObject, against schema: TableSchema?) throws(TableError) -> [String: ColumnType] {
        if let schema, item.count <= 500, item.keys.allSatisfy({ schema.columns[$0] != nil && ODataParser.isName($0) }) { return [:] }
        return try columns(of: item)
    }

    /// Checks that each value fits the column it goes to, so that it reads back as it was sent:
    /// a string into a text column, a number into an integer or real one, a Boolean into a
    /// Boolean one, an object or array into a JSON one; `null` fits any.
    ///
    /// - Parameters:
    ///   - values: The properties to write.
    ///   - schema: Their table's schema.
    ///   - view: The columns the request may see: a column it does not see (another user's) is
    ///     named as the property was sent, never as stored.
    /// - Throws: A 400 naming the first property whose value does not fit.
    static func checkTypes(_ values: JSONObject, against schema: TableSchema, naming view: ColumnView = .everything) throws(TableError) {
        // Checked in any order; a misfit found is reported as the first one by name.
        guard values.contains(where: { misfit($0.key, $0.value, schema) != nil }) else { return }
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            guard let (column, stored) = misfit(name, value, schema) else { continue }
            throw .badRequest(
                "The property '\(name.prefix(64))' is \(article(value)), but the column '\(view.spelling(of: column, sent: name).prefix(64))' holds \(plural(stored))"
            )
        }
    }

    /// The column `name` goes to and its type, when `value` does not fit it (`id` and `version`
    /// are not checked).
    private static func misfit(_ name: String, _ value: JSONValue, _ schema: TableSchema) -> (column: String, type: ColumnType)? {
        // `id` and `version` in another case are skipped too; a name spelled exactly as a column
        // that is not one of them cannot fold to them (a table has one column per folded name).
        guard let sent = ColumnType(inferringFrom: value), name != SystemProperty.id, name != SystemProperty.version,
            let column = schema.column(named: name), column == name || !systemKeys.contains(ColumnKey(name)),
            let stored = schema.columns[column], !fits(sent, stored)
        else { return nil }
        return (column, stored)
    }

    private static let systemKeys: Set<ColumnKey> = [ColumnKey(SystemProperty.id), ColumnKey(SystemProperty.version)]

    private static func fits(_ sent: ColumnType, _ stored: ColumnType) -> Bool {
        sent == stored || ((sent == .integer || sent == .real) && (stored == .integer || stored == .real))
    }

    private static func article(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "a Boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    private static func plural(_ type: ColumnType) -> String {
        switch type {
        case .text: return "strings"
        case .integer, .real: return "numbers"
        case .boolean: return "Booleans"
        case .json: return "objects and arrays"
        }
    }
}
