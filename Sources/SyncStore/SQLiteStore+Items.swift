import Foundation
import SyncSQL
import SyncSQLite
import SyncWire

/// SQLite's limit on host parameters in one statement (3.15: 999); one row per statement
/// leaves room for this many columns.
let maximumColumns = 900

/// Item properties that are no columns of their own: `id` is the key, and `deleted` is the
/// protocol's soft-delete flag, which the store does not keep.
private let unstoredProperties: Set<ColumnKey> = [ColumnKey(SystemProperty.id), ColumnKey(SystemProperty.deleted)]

extension StoreSession {
    func columns(of table: String) throws -> [String: ColumnType]? {
        schema.tables[ColumnKey(table)]
    }

    func lookup(table: String, id: String) throws -> JSONObject? {
        try Self.checkTableName(table)
        guard let columns = schema.tables[ColumnKey(table)] else { return nil }
        let statement = try statement(StoreSQL.lookup(table))
        try statement.bind([.text(id)])
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return RowShape(statement, columns: columns).item(from: statement)
    }

    func lookup(table: String, ids: [String]) throws -> [JSONObject] {
        try Self.checkTableName(table)
        guard let columns = schema.tables[ColumnKey(table)] else { return [] }
        var items: [JSONObject] = []
        items.reserveCapacity(ids.count)
        for chunk in Self.chunks(of: ids) {
            let statement = try statement(StoreSQL.lookupMany(table, count: chunk.count))
            try statement.bind(chunk.map(SQLValue.text))
            defer { statement.reset() }
            try RowShape.read(statement, columns: columns) { items.append($0) }
        }
        return items
    }

    /// The names and declared types of a statement's result columns, read once for all its rows
    /// (after the first step: a statement prepared before the table gained a column is prepared
    /// again by it).
    struct RowShape {
        private let names: [String]
        private let types: [ColumnType?]

        init(_ statement: Statement, columns: [String: ColumnType]) {
            names = (0..<statement.columnCount).map(statement.columnName)
            types = names.map { columns[$0] }
        }

        /// Steps through the rows of `statement`, giving each to `body` as an item.
        static func read(_ statement: Statement, columns: [String: ColumnType], _ body: (JSONObject) -> Void) throws {
            guard try statement.step() else { return }
            let shape = RowShape(statement, columns: columns)
            repeat { body(shape.item(from: statement)) } while try statement.step()
        }

        /// The current row of `statement` as an item.
        func item(from statement: Statement) -> JSONObject {
            var item = JSONObject(minimumCapacity: names.count)
            for index in names.indices {
                item[names[index]] = JSONValue(sql: statement.value(at: index), type: types[index])
            }
            return item
        }
    }

    func read(_ query: QueryDescription) throws -> QueryResult {
        try Self.checkTableName(query.table)
        guard let columns = schema.tables[ColumnKey(query.table)] else {
            return QueryResult(items: [], totalCount: query.includeTotalCount ? 0 : nil)
        }
        let plan = try QueryPlan(query, columns: columns)
        let statement = try statement(plan.select.sql)
        try statement.bind(plan.select.arguments)
        var items: [JSONObject] = []
        try RowShape.read(statement, columns: columns) { items.append($0) }
        statement.reset()
        var total: Int?
        if let count = plan.count {
            total = Int(try rows(count.sql, count.arguments).first?.first?.integerValue ?? 0)
        }
        return QueryResult(items: items, totalCount: total)
    }

    func defineTable(_ table: String, columns: [String: ColumnType]) throws {
        try Self.checkTableName(table)
        try Self.checkDistinctNames(columns.keys, of: "columns")
        try ensureColumns(table, columns.filter { !unstoredProperties.contains(ColumnKey($0.key)) })
    }

    /// Refuses `names` when two of them would name one column (they differ only by ASCII case).
    static func checkDistinctNames(_ names: some Sequence<String>, of what: String) throws {
        guard let (a, b) = ColumnIndex.clash(in: names) else { return }
        throw StoreError.invalidItem("the \(what) '\(a.prefix(64))' and '\(b.prefix(64))' differ only by case")
    }

    /// The columns of `table` by name, matched as SQLite matches them; empty when there is no table.
    private func columnIndex(_ table: String) -> ColumnIndex {
        ColumnIndex(schema.tables[ColumnKey(table)].map { Array($0.keys) } ?? [])
    }

    /// Creates `table` or adds the missing `columns` to it. A column whose name differs only by
    /// case from an existing one is that column. The names in `columns` must be distinct by
    /// ``ColumnKey`` and must not name `id` or `deleted`.
    private func ensureColumns(_ table: String, _ columns: [String: ColumnType]) throws {
        guard let existing = schema.tables[ColumnKey(table)] else {
            guard columns.count < maximumColumns else { throw StoreError.invalidItem("too many properties") }
            let sorted = columns.sorted { $0.key < $1.key }.map { ($0.key, $0.value.rawValue) }
            try connection.execute(StoreSQL.createTable(table, columns: sorted))
            schema.tables[ColumnKey(table)] = columns.merging([SystemProperty.id: .text]) { a, _ in a }
            return
        }
        let index = ColumnIndex(existing.keys)
        let missing = columns.filter { index.column(named: $0.key) == nil }.sorted { $0.key < $1.key }
        guard existing.count + missing.count < maximumColumns else {
            throw StoreError.invalidItem("too many properties")
        }
        for (name, type) in missing {
            try connection.execute(StoreSQL.addColumn(table, column: name, type: type.rawValue))
            schema.tables[ColumnKey(table)]?[name] = type
        }
    }

    func upsert(table: String, items: [JSONObject], ignoreMissingColumns: Bool) throws {
        try Self.checkTableName(table)
        var writer = ItemWriter()
        try writer.check(items)
        if !ignoreMissingColumns || schema.tables[ColumnKey(table)] == nil {
            try ensureColumns(table, Self.newColumns(of: items, spellings: writer.spellingCount, in: columnIndex(table)))
        }
        guard let columns = schema.tables[ColumnKey(table)] else { return }
        try writer.write(items, table: table, columns: columns, in: self)
    }

    /// The columns `items` would add to a table with the columns `existing`: one per name, the
    /// first item that gives it a value sets its spelling and type; later spellings that differ
    /// only by case are the same column. Each spelling is looked at until it is settled, and the
    /// items are read until all `count` spellings they have are.
    private static func newColumns(of items: [JSONObject], spellings count: Int, in existing: ColumnIndex) -> [String: ColumnType] {
        var wanted: [String: ColumnType] = [:]
        var spellings = ColumnIndex([])
        var settled = Set<String>()
        for item in items {
            if settled.count == count { break }
            for (name, value) in item where !settled.contains(name) {
                if unstoredProperties.contains(ColumnKey(name)) || existing.column(named: name) != nil || spellings.column(named: name) != nil {
                    settled.insert(name)
                } else if let type = ColumnType(inferringFrom: value) {
                    wanted[name] = type
                    spellings.insert(name)
                    settled.insert(name)
                }
            }
        }
        return wanted
    }

    func delete(table: String, ids: [String]) throws {
        try Self.checkTableName(table)
        guard schema.tables[ColumnKey(table)] != nil else { return }
        for id in ids { try run(StoreSQL.deleteByID(table), [.text(id)]) }
    }

    func delete(_ query: QueryDescription) throws {
        try Self.checkTableName(query.table)
        guard let columns = schema.tables[ColumnKey(query.table)] else { return }
        let delete = try QueryPlan.delete(query, columns: columns)
        try run(delete.sql, delete.arguments)
    }

    func deleteAll(table: String) throws {
        try Self.checkTableName(table)
        guard schema.tables[ColumnKey(table)] != nil else { return }
        try run(StoreSQL.deleteAll(table))
    }
}
