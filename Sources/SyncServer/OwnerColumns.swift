import SyncSQL
import SyncWire

/// The columns one request may see of a table: every column of a shared table; of a per-user
/// table, the system columns and the properties its owner has written (``OwnerColumns``), each
/// under the owner's own spelling.
///
/// Every item body a request answers goes through ``render(_:)``, and every query it runs is
/// checked against ``check(_:extraFilter:)`` first, so no answer to one user carries a column
/// name that only other users ever wrote.
struct ColumnView: Sendable {
    /// The stored spelling of each visible column → the spelling the owner answers with; `nil`
    /// for every column as stored (a shared table).
    private let spellings: [String: String]?
    /// The visible columns with their types (the system columns when the table does not exist).
    private let columns: [String: ColumnType]
    /// The table as stored, or the name requested when it does not exist.
    private let table: String
    /// The names the owner has written, by folded name (for ``OwnerColumns/record(_:table:scope:view:)``).
    let recorded: Set<ColumnKey>

    /// Every column as stored: a shared table's answers are its rows unchanged.
    static let everything = ColumnView(spellings: nil, columns: [:], table: "", recorded: [])

    private init(spellings: [String: String]?, columns: [String: ColumnType], table: String, recorded: Set<ColumnKey>) {
        self.spellings = spellings
        self.columns = columns
        self.table = table
        self.recorded = recorded
    }

    /// The view of an owner who has written `names` (first spelling of each folded name) to a
    /// table whose schema is `schema` (`nil` when it does not exist).
    init(owner names: [ColumnKey: String], table: String, schema: TableSchema?) {
        var spellings: [String: String] = [:]
        var columns = Self.systemColumns
        for (name, type) in schema?.columns ?? [:] {
            if Self.systemColumns[name] != nil {
                spellings[name] = name
            } else if let spelling = names[ColumnKey(name)] {
                spellings[name] = spelling
                columns[name] = type
            }
        }
        for name in Self.systemColumns.keys { spellings[name] = name }
        self.init(spellings: spellings, columns: columns, table: schema?.name ?? table, recorded: Set(names.keys))
    }

    /// The columns every table has, with their types.
    static let systemColumns: [String: ColumnType] = [
        SystemProperty.id: .text, SystemProperty.createdAt: .text, SystemProperty.updatedAt: .text,
        SystemProperty.version: .text, SystemProperty.deleted: .boolean,
    ]

    /// Whether the view is a per-user one (answers are rendered, queries checked).
    var isRestricted: Bool { spellings != nil }

    /// A row as the request may see it: of a per-user table, its visible columns under the
    /// owner's spellings, and any other column holding a value (only the owner writes the row, so
    /// a value in it is the owner's own); a shared table's row as it is.
    ///
    /// - Parameter row: A row as the storage returns it.
    /// - Returns: The item body to answer.
    func render(_ row: JSONObject) -> JSONObject {
        guard let spellings else { return row }
        var item = JSONObject(minimumCapacity: row.count)
        for (name, value) in row {
            if let spelling = spellings[name] {
                item[spelling] = value
            } else if value != .null {
                item[name] = value
            }
        }
        return item
    }

    /// The spelling the request knows the stored column `column` by: the owner's, or `sent` (the
    /// property as the request named it) for a column the owner has not written.
    func spelling(of column: String, sent: String) -> String {
        guard let spellings else { return column }
        return spellings[column] ?? sent
    }

    /// Checks that a query names only visible columns, with the translator's own checks and
    /// message (`unknown column 'x'`), so a column only other users wrote is refused exactly like
    /// one nobody wrote.
    ///
    /// - Throws: `QueryError` as the storage's translator would throw it over the visible columns.
    func check(_ query: QueryDescription, extraFilter: FilterExpression?) throws(QueryError) {
        guard isRestricted else { return }
        _ = try SQLTranslator(table: table, columns: columns, dialect: .sqlite).select(query, extraFilter: extraFilter)
    }
}

/// The names each owner has written to each per-user table, kept in a per-user table of the
/// storage itself, ``table`` (a name no request can use): one row per (owner, table, folded name)
/// holding the first spelling, plus one marker row per (owner, table) once the owner's columns
/// of a table older than this record were read from the owner's rows.
///
/// A name is recorded after a write that names it succeeded (`null` values included, so an owner
/// who set a property to `null` keeps seeing it as `null`). The record only ever grows.
struct OwnerColumns: Sendable {
    /// The table of the records.
    static let table = "__ciphersync_columns"
    private static let tableColumn = "table"
    private static let nameColumn = "name"

    let storage: any TableStorage

    /// The view of `table` for `scope`: ``ColumnView/everything`` for a shared scope; for an
    /// owner, the names recorded (read from the owner's rows once, when not recorded yet).
    func view(of table: String, scope: RowScope) async throws -> ColumnView {
        guard let owner = scope.owner else { return .everything }
        let schema = try await storage.schema(of: table)
        let key = ColumnKey(table).folded
        let query = QueryDescription(table: Self.table, filter: .binary(.eq, .member(Self.tableColumn), .literal(.string(key))))
        var names: [ColumnKey: String] = [:]
        var marked = false
        // A records table without its columns (left so by a server killed while it created it)
        // holds no record: the first record adds them.
        if try await hasRecordColumns() {
            for row in try await storage.select(query, scope: scope, extraFilter: nil) {
                guard case .string(let name)? = row[Self.nameColumn] else { continue }
                if row[SystemProperty.id]?.stringValue == key { marked = true } else { names[ColumnKey(name)] = name }
            }
        }
        if !marked, let schema {
            for name in try await columnsHoldingValues(schema, owner: owner) where names[ColumnKey(name)] == nil {
                names[ColumnKey(name)] = name
                try await insert(owner: owner, key: key, name: name)
            }
            try await insert(owner: owner, key: key, name: "")
        }
        return ColumnView(owner: names, table: table, schema: schema)
    }

    /// Records the names of `item` (a write that succeeded) the view lacks, and returns the
    /// view with them.
    func record(_ item: JSONObject, table: String, scope: RowScope, view: ColumnView) async throws -> ColumnView {
        guard let owner = scope.owner else { return view }
        let new = item.keys.filter { $0 != SystemProperty.id && $0 != SystemProperty.version && !view.recorded.contains(ColumnKey($0)) }
        guard !new.isEmpty else { return view }
        let key = ColumnKey(table).folded
        for name in new { try await insert(owner: owner, key: key, name: name) }
        return try await self.view(of: table, scope: scope)
    }

    /// Whether the records table exists with its columns.
    private func hasRecordColumns() async throws -> Bool {
        guard let records = try await storage.schema(of: Self.table) else { return false }
        return records.columns[Self.tableColumn] != nil && records.columns[Self.nameColumn] != nil
    }

    /// The item properties of `schema` that hold a value in some row of `owner`.
    private func columnsHoldingValues(_ schema: TableSchema, owner: String) async throws -> [String] {
        var found: [String] = []
        for name in schema.columns.keys.sorted() where ColumnView.systemColumns[name] == nil {
            let query = QueryDescription(
                table: schema.name, filter: .binary(.ne, .member(name), .literal(.null)), top: 1, selection: [SystemProperty.id])
            if try await !storage.select(query, scope: .owner(owner), extraFilter: nil).isEmpty { found.append(name) }
        }
        return found
    }

    /// Records one name (the marker when `name` is empty); a name recorded already stays as it is.
    private func insert(owner: String, key: String, name: String) async throws {
        let scope = RowScope.owner(owner)
        _ = try await storage.ensureColumns(Self.table, scope: scope, [Self.tableColumn: .text, Self.nameColumn: .text])
        let id = name.isEmpty ? key : key + "." + ColumnKey(name).folded
        let row: JSONObject = [SystemProperty.id: .string(id), Self.tableColumn: .string(key), Self.nameColumn: .string(name)]
        _ = try await storage.insert(table: Self.table, scope: scope, item: row)
    }
}
