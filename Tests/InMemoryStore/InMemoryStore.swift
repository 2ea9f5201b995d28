public import CipherSync
import Foundation
import Synchronization

/// A local store that keeps its tables in memory, written against the public store contract
/// alone (`import CipherSync`): the third store the conformance suite and the engine's end-to-end
/// tests run on, beside the plain and the encrypted SQLite store.
///
/// A write transaction works on a copy of the tables and replaces them when its body returns
/// (nothing when it throws); one lock keeps write transactions apart, and a read transaction reads
/// the tables as they were when it began.
public final class InMemoryStore: LocalStore {
    private let tables = Mutex<[String: MemoryTable]>([:])
    /// The change feed, when the store was made to publish one.
    public let changes: StoreChanges?

    /// An empty store.
    /// - Parameter publishesChanges: whether the store publishes the tables each write changed
    ///   (``LocalStore/changes``); without, the sync engine records its own changes.
    public init(publishesChanges: Bool = true) {
        changes = publishesChanges ? StoreChanges() : nil
    }

    public func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) async throws -> T {
        let snapshot = tables.withLock { $0 }
        return try body(MemoryTransaction(tables: snapshot))
    }

    public func write<T: Sendable>(_ body: @Sendable (any StoreWriter) throws -> T) async throws -> T {
        let (result, changed) = try tables.withLock { tables throws -> (T, Set<String>) in
            let transaction = MemoryTransaction(tables: tables)
            let result = try body(transaction)
            tables = transaction.tables
            return (result, transaction.changed)
        }
        if let changes, !changed.isEmpty { changes.publish(Set(changed.map { StoreChangeTopic.table(named: $0) })) }
        return result
    }
}

/// One table: its rows by folded id, in the order they were first written, and the spelling of
/// each column by its folded name.
struct MemoryTable: Sendable {
    var rows: [String: (order: Int, item: JSONObject)] = [:]
    var spellings: [String: String] = [:]
    var nextOrder = 0
}

/// Folds ASCII letters to lower case: how ids, table and column names match.
func folded(_ name: String) -> String {
    String(String.UnicodeScalarView(name.unicodeScalars.map { ("A"..."Z").contains($0) ? Unicode.Scalar($0.value + 32) ?? $0 : $0 }))
}

/// One transaction: the tables it sees (and, writing, changes), and the tables it changed.
final class MemoryTransaction: StoreWriter {
    var tables: [String: MemoryTable]
    var changed: Set<String> = []

    init(tables: [String: MemoryTable]) {
        self.tables = tables
    }

    func read(_ query: QueryDescription) throws -> QueryResult {
        guard let table = tables[folded(query.table)] else { return QueryResult(items: [], totalCount: query.includeTotalCount ? 0 : nil) }
        let filter = query.filter.map(MemoryFilter.init)
        var matched = try table.rows.values.sorted { $0.order < $1.order }.map(\.item).filter { item in
            try filter?.matches(item) ?? true
        }
        if !query.orderBy.isEmpty { try MemoryFilter.sort(&matched, by: query.orderBy) }
        let total = matched.count
        let page = matched.dropFirst(max(query.skip ?? 0, 0)).prefix(max(query.top ?? Int.max, 0))
        let items =
            query.selection.isEmpty
            ? Array(page)
            : page.map { item in
                let wanted = Set(query.selection.map(folded))
                return item.filter { wanted.contains(folded($0.key)) }
            }
        return QueryResult(items: items, totalCount: query.includeTotalCount ? total : nil)
    }

    func upsert(table name: String, items: [JSONObject], ignoreMissingColumns: Bool) throws {
        var table = tables[folded(name)] ?? MemoryTable()
        for item in items {
            guard case .string(let id)? = item["id"], !id.isEmpty else { throw StoreError.invalidItem("every item needs a string id") }
            let names = item.keys.map(folded)
            guard Set(names).count == names.count else { throw StoreError.invalidItem("two properties differ only by letter case") }
            let key = folded(id)
            var row = table.rows[key]?.item ?? ["id": .string(id)]
            for (property, value) in item where folded(property) != "id" && folded(property) != "deleted" {
                let column: String
                if let spelling = table.spellings[folded(property)] {
                    column = spelling
                } else if ignoreMissingColumns {
                    continue
                } else {
                    column = property
                    table.spellings[folded(property)] = property
                }
                row[column] = value
            }
            let order = table.rows[key]?.order ?? table.nextOrder
            if table.rows[key] == nil { table.nextOrder += 1 }
            table.rows[key] = (order, row)
        }
        tables[folded(name)] = table
        if !items.isEmpty { changed.insert(name) }
    }

    func delete(table name: String, ids: [String]) throws {
        guard var table = tables[folded(name)] else { return }
        for id in ids { table.rows[folded(id)] = nil }
        tables[folded(name)] = table
        if !ids.isEmpty { changed.insert(name) }
    }

    func delete(_ query: QueryDescription) throws {
        guard var table = tables[folded(query.table)] else { return }
        let filter = query.filter.map(MemoryFilter.init)
        for (key, row) in table.rows where try filter?.matches(row.item) ?? true { table.rows[key] = nil }
        tables[folded(query.table)] = table
        changed.insert(query.table)
    }
}
