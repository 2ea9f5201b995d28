import Foundation
import Logging
import SQLiteNIO
public import SyncSQL
public import SyncWire

/// Tables in SQLite through vapor/sqlite-nio (SQLite 3.54, symbols prefixed, so it shares a
/// process with SQLCipher). Every SQL string of this engine lives in this file or comes from
/// `SQLTranslator` in SQLite's dialect; identifiers go through `SQLIdentifier.quote`.
public actor SQLiteTableStorage: TableStorage {
    private let connection: SQLiteConnection
    /// The columns of each table, by table name matched as SQLite matches it (ASCII case folded).
    private var schema: [ColumnKey: [String: ColumnType]] = [:]
    /// Schema changes run one at a time (the actor alone would interleave them at each await).
    private let schemaGate = AsyncSerialGate()

    /// Opens (or creates) the database and loads its schema.
    public static func open(_ database: ServerConfiguration.Database, logger: Logger) async throws -> SQLiteTableStorage {
        let storage: SQLiteConnection.Storage
        switch database {
        case .memory: storage = .memory
        case .sqlite(let path): storage = .file(path: path)
        }
        let connection = try await SQLiteConnection.open(storage: storage, logger: logger)
        _ = try await connection.query("PRAGMA journal_mode = WAL", [])
        let store = SQLiteTableStorage(connection: connection)
        try await store.loadSchema()
        return store
    }

    private init(connection: SQLiteConnection) {
        self.connection = connection
    }

    private func loadSchema() async throws {
        let tables = try await connection.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'", [])
        for row in tables {
            guard let name = row.column("name")?.string else { continue }
            var columns: [String: ColumnType] = [:]
            for info in try await connection.query("SELECT name, type FROM pragma_table_info(?)", [.text(name)]) {
                if let column = info.column("name")?.string {
                    columns[column] = ColumnType(declared: info.column("type")?.string ?? "") ?? .text
                }
            }
            schema[ColumnKey(name)] = columns
        }
    }

    public func columns(of table: String) -> [String: ColumnType]? { schema[ColumnKey(table)] }

    public func ensureColumns(_ table: String, _ columns: [String: ColumnType]) async throws {
        // A name matches a column whatever the case of its ASCII letters, as in SQLite.
        func missing(from existing: [String: ColumnType]) -> [(String, ColumnType)] {
            var index = ColumnIndex(existing.keys)
            return columns.sorted { $0.key < $1.key }.filter { name, _ in
                defer { index.insert(name) }
                return index.column(named: name) == nil
            }
        }
        if let existing = schema[ColumnKey(table)], missing(from: existing).isEmpty { return }
        try await schemaGate.withTurn { try await changeSchema(table, missing: missing) }
    }

    /// Creates the table if it is new and adds the columns `missing` names; runs alone.
    private func changeSchema(_ table: String, missing: ([String: ColumnType]) -> [(String, ColumnType)]) async throws {
        let q = SQLIdentifier.quote
        if schema[ColumnKey(table)] == nil {
            let system: [String: ColumnType] = [
                SystemProperty.createdAt: .text, SystemProperty.updatedAt: .text, SystemProperty.version: .text,
                SystemProperty.deleted: .boolean,
            ]
            _ = try await connection.query("""
                CREATE TABLE IF NOT EXISTS \(q(table)) (\(q(SystemProperty.id)) TEXT PRIMARY KEY NOT NULL, \
                \(q(SystemProperty.createdAt)) TEXT NOT NULL, \(q(SystemProperty.updatedAt)) TEXT NOT NULL, \
                \(q(SystemProperty.version)) TEXT NOT NULL, \(q(SystemProperty.deleted)) BOOLEAN NOT NULL DEFAULT 0)
                """, [])
            _ = try await connection.query(
                "CREATE INDEX IF NOT EXISTS \(q(table + "_updatedAt")) ON \(q(table)) (\(q(SystemProperty.updatedAt)))", [])
            schema[ColumnKey(table)] = system.merging([SystemProperty.id: .text]) { a, _ in a }
        }
        for (name, type) in missing(schema[ColumnKey(table)] ?? [:]) {
            _ = try await connection.query("ALTER TABLE \(q(table)) ADD COLUMN \(q(name)) \(type.rawValue)", [])
            schema[ColumnKey(table)]?[name] = type
        }
    }

    public func select(_ query: QueryDescription, extraFilter: FilterExpression?) async throws -> [JSONObject] {
        guard let columns = schema[ColumnKey(query.table)] else { return [] }
        let statement = try SQLTranslator(table: query.table, columns: columns, dialect: .sqlite).select(query, extraFilter: extraFilter)
        return try await rows(statement, columns: columns)
    }

    public func count(_ query: QueryDescription, extraFilter: FilterExpression?) async throws -> Int {
        guard let columns = schema[ColumnKey(query.table)] else { return 0 }
        let statement = try SQLTranslator(table: query.table, columns: columns, dialect: .sqlite).count(query, extraFilter: extraFilter)
        let rows = try await connection.query(statement.sql, statement.arguments.map(Self.data))
        return rows.first?.columns.first?.data.integer ?? 0
    }

    public func row(table: String, id: String) async throws -> JSONObject? {
        guard let columns = schema[ColumnKey(table)] else { return nil }
        let sql = "SELECT * FROM \(SQLIdentifier.quote(table)) WHERE \(SQLIdentifier.quote(SystemProperty.id)) = ?"
        return try await rows(SQLStatement(sql, [.text(id)]), columns: columns).first
    }

    public func insert(table: String, row: JSONObject) async throws -> Bool {
        let names = row.keys.sorted()
        let sql = """
            INSERT INTO \(SQLIdentifier.quote(table)) (\(names.map(SQLIdentifier.quote).joined(separator: ", "))) \
            VALUES (\(names.map { _ in "?" }.joined(separator: ", "))) ON CONFLICT DO NOTHING RETURNING 1
            """
        let binds = try names.map { Self.data(try SQLValue(json: row[$0] ?? .null)) }
        return try await !connection.query(sql, binds).isEmpty
    }

    public func update(table: String, id: String, version: String, values: JSONObject) async throws -> Bool {
        let names = values.keys.sorted()
        guard !names.isEmpty else { return false }
        let sql = """
            UPDATE \(SQLIdentifier.quote(table)) SET \(names.map { "\(SQLIdentifier.quote($0)) = ?" }.joined(separator: ", ")) \
            WHERE \(SQLIdentifier.quote(SystemProperty.id)) = ? AND \(SQLIdentifier.quote(SystemProperty.version)) = ? RETURNING 1
            """
        let binds = try names.map { Self.data(try SQLValue(json: values[$0] ?? .null)) } + [.text(id), .text(version)]
        return try await !connection.query(sql, binds).isEmpty
    }

    public func delete(table: String, id: String, version: String) async throws -> Bool {
        let sql = """
            DELETE FROM \(SQLIdentifier.quote(table)) WHERE \(SQLIdentifier.quote(SystemProperty.id)) = ? \
            AND \(SQLIdentifier.quote(SystemProperty.version)) = ? RETURNING 1
            """
        return try await !connection.query(sql, [.text(id), .text(version)]).isEmpty
    }

    public func close() async throws {
        try await connection.close()
    }

    private func rows(_ statement: SQLStatement, columns: [String: ColumnType]) async throws -> [JSONObject] {
        try await connection.query(statement.sql, statement.arguments.map(Self.data)).map { row in
            var item: JSONObject = [:]
            for column in row.columns {
                item[column.name] = JSONValue(sql: Self.value(column.data), type: columns[column.name])
            }
            return item
        }
    }

    /// sqlite-nio's value for a bound value: the driver's side of the one value type.
    private static func data(_ value: SQLValue) -> SQLiteData {
        switch value {
        case .null: return .null
        case .integer(let i): return .integer(Int(i))
        case .real(let d): return .float(d)
        case .text(let s): return .text(s)
        case .blob(let bytes): return .blob(ByteBuffer(bytes: bytes))
        }
    }

    /// The value of a result column read by sqlite-nio.
    private static func value(_ data: SQLiteData) -> SQLValue {
        switch data {
        case .null: return .null
        case .integer(let i): return .integer(Int64(i))
        case .float(let d): return .real(d)
        case .text(let s): return .text(s)
        case .blob(let buffer): return .blob(Array(buffer.readableBytesView))
        }
    }
}
