import Foundation
package import SyncSQL
package import SyncWire

/// The sync engine's records kept as plain rows of three system tables, read and written through
/// the public store contract: what the engine uses on a store that does not keep them itself
/// (``SQLiteStore`` does, with its own schema and statements).
///
/// - `__operations`: one row per queued operation, its queue id in `sequence` (and, as a string,
///   in `id`), the table and item id also ASCII-case-folded (`tableKey`, `itemKey`) so that they
///   match as the engine matches them, the item as JSON text.
/// - `__errors`: one row per operation error, by its id; `sequence` keeps the order of arrival.
/// - `__config`: one row per value, its id the key's UTF-8 in hex (keys are compared exactly, and
///   ids whatever their ASCII case); the row `next-sequence` holds the next queue id, so that an id
///   is never given twice.
///
/// Dates are kept as milliseconds since 1970.
package struct SystemTableRecords<Base: StoreReader>: SyncRecordsReader {
    let base: Base

    init(_ base: Base) {
        self.base = base
    }

    // MARK: tables (forwarded)

    /// The columns the table's rows hold, typed by their first value that is not `null`; `nil`
    /// for a table with no rows (a store without schema cannot tell it from a missing one).
    package func columns(of table: String) throws -> [String: ColumnType]? {
        let rows = try base.read(QueryDescription(table: table)).items
        guard !rows.isEmpty else { return nil }
        var columns: [String: ColumnType] = [:]
        for row in rows {
            for (name, value) in row where columns[name] == nil { columns[name] = ColumnType(inferringFrom: value) }
        }
        return columns
    }

    package func read(_ query: QueryDescription) throws -> QueryResult { try base.read(query) }

    // MARK: items by id

    package func lookup(table: String, id: String) throws -> JSONObject? {
        try base.read(QueryDescription(table: table, filter: SystemTables.equal(SystemProperty.id, .string(id)), top: 1)).items.first
    }

    package func lookup(table: String, ids: [String]) throws -> [JSONObject] {
        try SystemTables.chunks(of: ids).flatMap { chunk in
            try base.read(QueryDescription(table: table, filter: SystemTables.anyOf(SystemProperty.id, chunk.map(FilterLiteral.string)))).items
        }
    }

    // MARK: operations

    package func operations(table: String?) throws -> [TableOperationRecord] {
        try operations(where: table.map { SystemTables.equal("tableKey", .string(ItemID.key($0))) })
    }

    package func operation(id: Int64) throws -> TableOperationRecord? {
        try operations(where: SystemTables.equal("sequence", .int(id)), top: 1).first
    }

    package func operation(table: String, itemId: String) throws -> TableOperationRecord? {
        let filter = FilterExpression.binary(
            .and, SystemTables.equal("tableKey", .string(ItemID.key(table))), SystemTables.equal("itemKey", .string(ItemID.key(itemId))))
        return try operations(where: filter, ascending: false, top: 1).first
    }

    package func operation(after id: Int64) throws -> TableOperationRecord? {
        try operations(after: id, limit: 1).first
    }

    package func operations(after id: Int64, limit: Int) throws -> [TableOperationRecord] {
        guard limit > 0 else { return [] }
        return try operations(where: .binary(.gt, .member("sequence"), .literal(.int(id))), top: limit)
    }

    package func operations(ids: [Int64]) throws -> [TableOperationRecord] {
        try SystemTables.chunks(of: ids).flatMap { try operations(where: SystemTables.anyOf("sequence", $0.map(FilterLiteral.int))) }
            .sorted { $0.id < $1.id }
    }

    package func operationCount(table: String?) throws -> Int {
        let filter = table.map { SystemTables.equal("tableKey", .string(ItemID.key($0))) }
        return try base.read(QueryDescription(table: SystemTables.operations, filter: filter, selection: [SystemProperty.id])).items.count
    }

    /// The operations `filter` matches, in queue order (or the reverse).
    private func operations(where filter: FilterExpression?, ascending: Bool = true, top: Int? = nil) throws -> [TableOperationRecord] {
        let query = QueryDescription(table: SystemTables.operations, filter: filter, orderBy: [OrderBy("sequence", ascending: ascending)], top: top)
        return try base.read(query).items.map(SystemTables.operation(from:))
    }

    // MARK: errors

    package func operationErrors() throws -> [OperationErrorRecord] {
        try errors(where: nil)
    }

    package func operationErrors(operationId: Int64) throws -> [OperationErrorRecord] {
        try errors(where: SystemTables.equal("operationId", .int(operationId)))
    }

    private func errors(where filter: FilterExpression?) throws -> [OperationErrorRecord] {
        let query = QueryDescription(table: SystemTables.errors, filter: filter, orderBy: [OrderBy("createdAt"), OrderBy("sequence")])
        return try base.read(query).items.map(SystemTables.error(from:))
    }

    // MARK: config

    package func configValue(forKey key: String) throws -> String? {
        try lookup(table: SystemTables.config, id: SystemTables.configID(key))?["value"]?.stringValue
    }
}

extension SystemTableRecords: StoreWriter, SyncRecordsWriter where Base: StoreWriter {
    // MARK: tables (forwarded)

    /// Nothing to do: a store of the public contract has no schema (an upsert brings its columns).
    package func defineTable(_ table: String, columns: [String: ColumnType]) throws {}
    package func upsert(table: String, items: [JSONObject], ignoreMissingColumns: Bool) throws {
        try base.upsert(table: table, items: items, ignoreMissingColumns: ignoreMissingColumns)
    }
    package func delete(table: String, ids: [String]) throws { try base.delete(table: table, ids: ids) }
    package func delete(_ query: QueryDescription) throws { try base.delete(query) }
    package func deleteAll(table: String) throws { try base.delete(QueryDescription(table: table)) }

    // MARK: operations

    package func addOperation(kind: TableOperationRecord.Kind, table: String, itemId: String, item: JSONObject?) throws -> TableOperationRecord {
        var record = TableOperationRecord(id: try nextSequence(), kind: kind, table: table, itemId: itemId, item: item)
        record.createdAt = SystemTables.date(SystemTables.milliseconds(record.createdAt))
        try updateOperation(record)
        return record
    }

    package func updateOperation(_ operation: TableOperationRecord) throws {
        try base.upsert(table: SystemTables.operations, items: [try SystemTables.row(of: operation)], ignoreMissingColumns: false)
    }

    package func deleteOperation(id: Int64) throws {
        try deleteOperations(ids: [id])
    }

    package func deleteOperations(table: String) throws {
        try deleteOperations(ids: try operations(table: table).map(\.id))
    }

    package func setState(_ state: TableOperationRecord.State, ofOperations ids: [Int64]) throws {
        let rows: [JSONObject] = try operations(ids: ids).map { [SystemProperty.id: .string(String($0.id)), "state": .int(Int64(state.rawValue))] }
        try base.upsert(table: SystemTables.operations, items: rows, ignoreMissingColumns: false)
    }

    package func deleteOperations(ids: [Int64]) throws {
        for chunk in SystemTables.chunks(of: ids) {
            try base.delete(table: SystemTables.operations, ids: chunk.map { String($0) })
            try base.delete(QueryDescription(table: SystemTables.errors, filter: SystemTables.anyOf("operationId", chunk.map(FilterLiteral.int))))
        }
    }

    /// Takes the next queue id (errors take theirs from the same count, for their order).
    private func nextSequence() throws -> Int64 {
        let next = try lookup(table: SystemTables.config, id: SystemTables.counterID)?["value"]?.intValue ?? 1
        let counter: JSONObject = [SystemProperty.id: .string(SystemTables.counterID), "value": .int(next + 1)]
        try base.upsert(table: SystemTables.config, items: [counter], ignoreMissingColumns: false)
        return next
    }

    // MARK: errors

    package func addOperationError(_ error: OperationErrorRecord) throws {
        try base.upsert(
            table: SystemTables.errors, items: [try SystemTables.row(of: error, sequence: try nextSequence())], ignoreMissingColumns: false)
    }

    package func deleteOperationErrors(operationId: Int64) throws {
        try base.delete(QueryDescription(table: SystemTables.errors, filter: SystemTables.equal("operationId", .int(operationId))))
    }

    package func deleteOperationError(id: String) throws {
        try base.delete(table: SystemTables.errors, ids: [id])
    }

    // MARK: config

    package func setConfigValue(_ value: String, forKey key: String) throws {
        let row: JSONObject = [SystemProperty.id: .string(SystemTables.configID(key)), "key": .string(key), "value": .string(value)]
        try base.upsert(table: SystemTables.config, items: [row], ignoreMissingColumns: false)
    }

    package func deleteConfigValue(forKey key: String) throws {
        try base.delete(table: SystemTables.config, ids: [SystemTables.configID(key)])
    }

    package func deleteConfigValues(withPrefix prefix: String) throws {
        let rows = try base.read(QueryDescription(table: SystemTables.config, selection: [SystemProperty.id, "key"])).items
        let ids = rows.compactMap { row -> String? in
            guard let key = row["key"]?.stringValue, key.unicodeScalars.starts(with: prefix.unicodeScalars) else { return nil }
            return row[SystemProperty.id]?.stringValue
        }
        try base.delete(table: SystemTables.config, ids: ids)
    }
}

/// The names, rows and filters of the system tables of ``SystemTableRecords``.
enum SystemTables {
    static let operations = "__operations"
    static let errors = "__errors"
    static let config = "__config"

    /// The `__config` row holding the next queue id.
    static let counterID = "next-sequence"
    /// The most ids one read or delete names.
    static let idsPerQuery = 100

    /// The id of a config key's row: `k` and the key's UTF-8 in hex.
    static func configID(_ key: String) -> String {
        "k" + key.utf8.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    // MARK: filters

    static func equal(_ member: String, _ value: FilterLiteral) -> FilterExpression {
        .binary(.eq, .member(member), .literal(value))
    }

    /// `member` equal to one of `values`.
    static func anyOf(_ member: String, _ values: [FilterLiteral]) -> FilterExpression? {
        values.map { equal(member, $0) }.reduce(nil) { joined, next in joined.map { .binary(.or, $0, next) } ?? next }
    }

    static func chunks<T>(of values: [T]) -> [ArraySlice<T>] {
        stride(from: 0, to: values.count, by: idsPerQuery).map { values[$0..<min($0 + idsPerQuery, values.count)] }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count < width ? String(repeating: "0", count: width - count) + self : self
    }
}
