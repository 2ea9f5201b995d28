import Foundation
import SyncSQLite
import SyncWire

/// SQLite's limit on host parameters in one statement (3.15: 999); one row per statement
/// leaves room for this many columns.
let maximumColumns = 900

extension StoreSession {
    func columns(of table: String) throws -> [String: ColumnType]? {
        schema.tables[table]
    }

    func lookup(table: String, id: String) throws -> JSONObject? {
        try Self.checkTableName(table)
        guard let columns = schema.tables[table] else { return nil }
        let statement = try statement(StoreSQL.lookup(table))
        try statement.bind([.text(id)])
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return item(from: statement, columns: columns)
    }

    /// The current row of `statement` as an item.
    func item(from statement: Statement, columns: [String: ColumnType]) -> JSONObject {
        var item: JSONObject = [:]
        for index in 0..<statement.columnCount {
            let name = statement.columnName(index)
            item[name] = ValueCoding.jsonValue(statement.value(at: index), type: columns[name])
        }
        return item
    }

    func read(_ query: QueryDescription) throws -> QueryResult {
        try Self.checkTableName(query.table)
        guard let columns = schema.tables[query.table] else {
            return QueryResult(items: [], totalCount: query.includeTotalCount ? 0 : nil)
        }
        let plan = try QueryPlan(query, columns: columns)
        let statement = try statement(plan.select.sql)
        try statement.bind(plan.select.arguments)
        var items: [JSONObject] = []
        while try statement.step() { items.append(item(from: statement, columns: columns)) }
        statement.reset()
        var total: Int?
        if let count = plan.count {
            total = Int(try rows(count.sql, count.arguments).first?.first?.integerValue ?? 0)
        }
        return QueryResult(items: items, totalCount: total)
    }

    func defineTable(_ table: String, columns: [String: ColumnType]) throws {
        try Self.checkTableName(table)
        try ensureColumns(table, columns.filter { $0.key != SystemProperty.id })
    }

    /// Creates `table` or adds the missing `columns` to it.
    private func ensureColumns(_ table: String, _ columns: [String: ColumnType]) throws {
        guard let existing = schema.tables[table] else {
            guard columns.count < maximumColumns else { throw StoreError.invalidItem("too many properties") }
            let sorted = columns.sorted { $0.key < $1.key }.map { ($0.key, $0.value.rawValue) }
            try connection.execute(StoreSQL.createTable(table, columns: sorted))
            schema.tables[table] = columns.merging([SystemProperty.id: .text]) { a, _ in a }
            return
        }
        let missing = columns.filter { existing[$0.key] == nil }.sorted { $0.key < $1.key }
        guard existing.count + missing.count < maximumColumns else {
            throw StoreError.invalidItem("too many properties")
        }
        for (name, type) in missing {
            try connection.execute(StoreSQL.addColumn(table, column: name, type: type.rawValue))
            schema.tables[table]?[name] = type
        }
    }

    func upsert(table: String, items: [JSONObject], ignoreMissingColumns: Bool) throws {
        try Self.checkTableName(table)
        var ids: [String] = []
        ids.reserveCapacity(items.count)
        for item in items {
            guard case .string(let id)? = item[SystemProperty.id], ItemID.isValid(id) else {
                throw StoreError.invalidItem("every item needs a valid string id")
            }
            ids.append(id)
        }
        if !ignoreMissingColumns || schema.tables[table] == nil {
            var wanted: [String: ColumnType] = [:]
            for item in items {
                for (name, value) in item where name != SystemProperty.id && wanted[name] == nil {
                    if let type = ColumnType(inferringFrom: value) { wanted[name] = type }
                }
            }
            try ensureColumns(table, wanted)
        }
        let known = schema.tables[table] ?? [:]
        for (item, id) in zip(items, ids) {
            let names = item.keys.filter { $0 != SystemProperty.id && known[$0] != nil }.sorted()
            let values = try names.map { try ValueCoding.sqliteValue(item[$0] ?? .null) }
            if !names.isEmpty {
                try run(StoreSQL.update(table, columns: names), values + [.text(id)])
                if connection.changes > 0 { continue }
            } else if try lookup(table: table, id: id) != nil {
                continue
            }
            try run(StoreSQL.insert(table, columns: names), [.text(id)] + values)
        }
    }

    func delete(table: String, ids: [String]) throws {
        try Self.checkTableName(table)
        guard schema.tables[table] != nil else { return }
        for id in ids { try run(StoreSQL.deleteByID(table), [.text(id)]) }
    }

    func delete(_ query: QueryDescription) throws {
        try Self.checkTableName(query.table)
        guard let columns = schema.tables[query.table] else { return }
        let delete = try QueryPlan.delete(query, columns: columns)
        try run(delete.sql, delete.arguments)
    }

    func deleteAll(table: String) throws {
        try Self.checkTableName(table)
        guard schema.tables[table] != nil else { return }
        try run(StoreSQL.deleteAll(table))
    }
}
