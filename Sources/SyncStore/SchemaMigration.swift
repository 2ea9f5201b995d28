import Foundation
import SyncSQL
import SyncSQLite
import SyncWire

/// Brings a database made by an earlier version of the store up to date when it is opened, in
/// one transaction (all of it happens, or none):
///
/// - a user table whose `id` compares exactly (made before ids matched whatever their ASCII
///   case) or that has a `deleted` column (the protocol's flag, which the store no longer keeps)
///   is rebuilt: a new table with `id … COLLATE NOCASE` and the other columns, the rows copied,
///   the old table dropped, the new one renamed (SQLite 3.15 has no `ALTER COLUMN`). Rows whose
///   ids differ only by case are one item now: the one with a pending operation is kept, else the
///   one with the newest `updatedAt` (text order is time order; no timestamp is oldest), else
///   the one written last;
/// - the operation errors table gets its `conflict` column.
enum SchemaMigration {
    static func run(_ connection: Connection) throws {
        let tables = try connection.rows(StoreSQL.userTables).compactMap { $0.first?.textValue }
        let stale = try tables.filter { try needsRebuild($0, connection) }
        let errorColumns = try SchemaCache.columns(of: StoreSQL.errorsTable, connection)
        let addConflict = ColumnIndex(errorColumns.keys).column(named: "conflict") == nil
        guard !stale.isEmpty || addConflict else { return }
        try connection.transaction {
            if addConflict { try connection.execute(StoreSQL.addErrorConflictColumn) }
            for table in stale { try rebuild(table, connection) }
        }
    }

    /// Whether `table` has a `deleted` column or an `id` that does not compare with `NOCASE`.
    static func needsRebuild(_ table: String, _ connection: Connection) throws -> Bool {
        let columns = try SchemaCache.columns(of: table, connection)
        if ColumnIndex(columns.keys).column(named: SystemProperty.deleted) != nil { return true }
        // PRAGMA index_list rows: seq, name, unique, origin, partial; the primary key's index has
        // origin "pk". PRAGMA index_xinfo rows: seqno, cid, name, desc, coll, key.
        guard
            let primaryKey = try connection.rows(StoreSQL.indexList(table)).first(where: { $0.count > 3 && $0[3].textValue == "pk" }),
            let index = primaryKey[1].textValue
        else { return false }
        let idColumn = try connection.rows(StoreSQL.indexColumns(index)).first { $0.count > 4 && $0[2].textValue == SystemProperty.id }
        return idColumn?[4].textValue?.uppercased() != "NOCASE"
    }

    /// Rebuilds `table` with a `NOCASE` id and without a `deleted` column, one row per item.
    private static func rebuild(_ table: String, _ connection: Connection) throws {
        let columns = try SchemaCache.columns(of: table, connection)
        let index = ColumnIndex(columns.keys)
        try dropCaseDuplicates(table, updatedAt: index.column(named: SystemProperty.updatedAt), connection)
        let dropped = [SystemProperty.id, SystemProperty.deleted].map(ColumnKey.init)
        let kept = columns.filter { !dropped.contains(ColumnKey($0.key)) }.sorted { $0.key < $1.key }
        try connection.execute(StoreSQL.createTable(StoreSQL.migratingTable, columns: kept.map { ($0.key, $0.value.rawValue) }))
        try connection.execute(StoreSQL.copyRows(from: table, to: StoreSQL.migratingTable, columns: [SystemProperty.id] + kept.map(\.key)))
        try connection.execute(StoreSQL.dropTable(table))
        try connection.execute(StoreSQL.renameTable(StoreSQL.migratingTable, to: table))
    }

    /// Deletes all but one row of each set of rows whose ids differ only by ASCII case.
    private static func dropCaseDuplicates(_ table: String, updatedAt: String?, _ connection: Connection) throws {
        struct Row {
            var rowid: Int64
            var id: String
            var updatedAt: String?
        }
        let pending = Set(try connection.rows(StoreSQL.pendingItemIDs, [.text(table)]).compactMap { $0.first?.textValue })
        var groups: [String: [Row]] = [:]
        for row in try connection.rows(StoreSQL.rowKeys(table, updatedAt: updatedAt)) {
            guard row.count == 3, let rowid = row[0].integerValue, let id = row[1].textValue else { continue }
            groups[ItemID.key(id), default: []].append(Row(rowid: rowid, id: id, updatedAt: row[2].textValue))
        }
        for rows in groups.values where rows.count > 1 {
            let keeper = rows.max { a, b in
                let (pa, pb) = (pending.contains(a.id), pending.contains(b.id))
                if pa != pb { return pb }
                if a.updatedAt != b.updatedAt { return (a.updatedAt ?? "") < (b.updatedAt ?? "") }
                return a.rowid < b.rowid
            }
            for row in rows where row.rowid != keeper?.rowid {
                try connection.execute(StoreSQL.deleteRow(table), [.integer(row.rowid)])
            }
        }
    }
}
