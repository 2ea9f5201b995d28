import Logging
import PostgresNIO
public import SyncSQL
import SyncWire
import Synchronization

/// The schema: the metadata table, the tables and their columns, created under each table's
/// metadata-row lock and cached per instance (see ``PostgresTableStorage``).
extension PostgresTableStorage {
    /// The table of one row per table: key, name, last stamp.
    static let metadataTable = "__ciphersync_tables"
    /// The table of the stamp of each scope's newest hard delete: key, owner (empty for a shared
    /// table), stamp, written by a hard delete in its transaction.
    static let removalsTable = "__ciphersync_removals"
    /// The domain of JSON columns (text, byte order), so a column's type reads back as JSON.
    static let jsonDomain = "__ciphersync_json"
    /// The advisory lock that serialises the creation of the metadata table and the domain.
    static let setupLock: Int64 = 0x4369_7068_6572_5379  // "CipherSy"

    /// The SQL type of a column type.
    static func sqlType(_ type: ColumnType) -> SQLFragment {
        switch type {
        case .text: return "TEXT COLLATE \"C\""
        case .integer: return "NUMERIC"
        case .real: return "DOUBLE PRECISION"
        case .boolean: return "BOOLEAN"
        case .json: return "\(identifier: jsonDomain)"
        }
    }

    /// The column type of a PostgreSQL type name (`pg_type.typname`); `nil` for a type this
    /// storage never creates.
    static func columnType(typeName: String) -> ColumnType? {
        switch typeName {
        case "text", "varchar": return .text
        case "numeric", "int8", "int4", "int2": return .integer
        case "float8", "float4": return .real
        case "bool": return .boolean
        case jsonDomain: return .json
        default: return nil
        }
    }

    /// Creates the metadata table and the JSON domain unless they exist, one instance at a time.
    func prepareDatabase() async throws {
        try await transaction { connection in
            try await lockSetup(on: connection)
            let metadata: SQLFragment = """
                CREATE TABLE IF NOT EXISTS \(identifier: Self.metadataTable) (\
                \(identifier: "key") TEXT COLLATE "C" PRIMARY KEY, \(identifier: "name") TEXT COLLATE "C" NOT NULL, \
                \(identifier: "lastStamp") BIGINT)
                """
            _ = try await run(counted(metadata.statement(in: .postgres)), on: connection)
            let removals: SQLFragment = """
                CREATE TABLE IF NOT EXISTS \(identifier: Self.removalsTable) (\
                \(identifier: "key") TEXT COLLATE "C" NOT NULL, \(identifier: "owner") TEXT COLLATE "C" NOT NULL, \
                \(identifier: "stamp") TEXT COLLATE "C" NOT NULL, PRIMARY KEY (\(identifier: "key"), \(identifier: "owner")))
                """
            _ = try await run(counted(removals.statement(in: .postgres)), on: connection)
            try await prepareAttachments(on: connection)
            let domain: SQLFragment = """
                SELECT 1 FROM pg_type WHERE typname = \(bind: .text(Self.jsonDomain)) \
                AND typnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
                """
            if try await run(counted(domain.statement(in: .postgres)), on: connection).isEmpty {
                let create: SQLFragment = "CREATE DOMAIN \(identifier: Self.jsonDomain) AS TEXT COLLATE \"C\""
                _ = try await run(counted(create.statement(in: .postgres)), on: connection)
            }
        }
    }

    /// Reads every table's schema from the database.
    func reloadSchemas() async throws {
        let loaded = try await readSchemas(key: nil, on: nil)
        schemas.withLock { $0 = loaded }
    }

    /// Reads one table's schema from the database (another instance may have made or changed
    /// it); `nil` when the table does not exist.
    func reloadSchema(of table: String, on connection: PostgresConnection? = nil) async throws -> TableSchema? {
        let key = ColumnKey(table)
        let schema = try await readSchemas(key: table, on: connection)[key]
        cache(schema, of: key)
        return schema
    }

    /// The schemas of the tables in the metadata (of the one whose key is `key`'s, if given).
    private func readSchemas(key name: String?, on connection: PostgresConnection?) async throws -> [ColumnKey: TableSchema] {
        var sql: SQLFragment = """
            SELECT m.\(identifier: "name") AS "table", a.attname AS "column", t.typname AS "type" \
            FROM \(identifier: Self.metadataTable) m \
            JOIN pg_attribute a ON a.attrelid = to_regclass(quote_ident(m.\(identifier: "name"))) \
            JOIN pg_type t ON t.oid = a.atttypid WHERE a.attnum > 0 AND NOT a.attisdropped
            """
        if let name { sql.append(" AND m.\(identifier: "key") = \(bind: .text(Self.metadataKey(name)))") }
        let query = counted(sql.statement(in: .postgres))
        let rows: [PostgresRow]
        if let connection {
            rows = try await run(query, on: connection)
        } else {
            rows = try await leased { connection in try await run(query, on: connection) }
        }
        var found: [ColumnKey: TableSchema] = [:]
        for row in rows {
            let values = Dictionary(Self.values(row), uniquingKeysWith: { first, _ in first })
            guard let table = values["table"]?.textValue, let column = values["column"]?.textValue else { continue }
            var schema = found[ColumnKey(table)] ?? TableSchema(name: table, columns: [:], isPerUser: false)
            if column == TableSchema.ownerColumn {
                schema.isPerUser = true
            } else {
                schema.columns[column] = Self.columnType(typeName: values["type"]?.textValue ?? "") ?? .text
            }
            found[ColumnKey(table)] = schema
        }
        return found
    }

    /// The metadata key of a table: its name with ASCII letters folded.
    static func metadataKey(_ table: String) -> String { ColumnKey(table).folded }

    public func ensureColumns(_ table: String, scope: RowScope, _ columns: [String: ColumnType]) async throws -> TableSchema {
        if let existing = try await schema(of: table) {
            try existing.check(scope)
            if existing.missingColumns(columns).isEmpty { return existing }
        }
        guard table.utf8.count <= Self.maximumTableNameBytes else {
            throw TableError.badRequest("A table name may have at most \(Self.maximumTableNameBytes) bytes in this server's database")
        }
        if let long = columns.keys.first(where: { $0.utf8.count > Self.maximumNameBytes }) {
            throw TableError.badRequest(
                "The property name '\(long.prefix(64))' is longer than \(Self.maximumNameBytes) bytes, the most this server's database keeps")
        }
        let schema = try await transaction { connection in try await changeSchema(table, scope: scope, columns, on: connection) }
        cache(schema, of: ColumnKey(table))
        return schema
    }

    /// Creates the table if it is new and adds the columns it lacks, holding the table's
    /// metadata-row lock (so one instance at a time, and no write in between).
    private func changeSchema(
        _ table: String, scope: RowScope, _ columns: [String: ColumnType], on connection: PostgresConnection
    ) async throws -> TableSchema {
        let key = Self.metadataKey(table)
        let register: SQLFragment = """
            INSERT INTO \(identifier: Self.metadataTable) (\(identifier: "key"), \(identifier: "name")) \
            VALUES (\(bind: .text(key)), \(bind: .text(table))) ON CONFLICT DO NOTHING
            """
        _ = try await run(counted(register.statement(in: .postgres)), on: connection)
        let lock: SQLFragment =
            "SELECT \(identifier: "name") FROM \(identifier: Self.metadataTable) WHERE \(identifier: "key") = \(bind: .text(key)) FOR UPDATE"
        let locked = try await run(counted(lock.statement(in: .postgres)), on: connection)
        let name = locked.first.flatMap { Self.values($0).first?.1.textValue } ?? table
        var schema: TableSchema
        if let existing = try await readSchemas(key: name, on: connection)[ColumnKey(name)] {
            schema = existing
        } else {
            for statement in Self.createTable(name, isPerUser: scope.owner != nil) {
                _ = try await run(counted(statement), on: connection)
            }
            schema = TableSchema(name: name, columns: [:], isPerUser: scope.owner != nil)
            for column in [SystemProperty.id, SystemProperty.createdAt, SystemProperty.updatedAt, SystemProperty.version] {
                schema.columns[column] = .text
            }
            schema.columns[SystemProperty.deleted] = .boolean
        }
        try schema.check(scope)
        for (column, type) in schema.missingColumns(columns) {
            let sql: SQLFragment =
                "ALTER TABLE \(identifier: schema.name) ADD COLUMN IF NOT EXISTS \(identifier: column) \(inline: Self.sqlType(type))"
            _ = try await run(counted(sql.statement(in: .postgres)), on: connection)
            schema.columns[column] = type
        }
        return schema
    }

    /// The statements that create a table, its key and its `updatedAt` index: the system
    /// columns, the owner column of a per-user table; the key is the folded id (owner first),
    /// and both indexes order `NULL` first, as the dialect's `ORDER BY` does, so pages read in
    /// order from the index.
    static func createTable(_ table: String, isPerUser: Bool) -> [SQLStatement] {
        var definitions: [SQLFragment] = []
        if isPerUser { definitions.append("\(identifier: TableSchema.ownerColumn) TEXT COLLATE \"C\" NOT NULL") }
        definitions += [
            "\(identifier: SystemProperty.id) TEXT COLLATE \"C\" NOT NULL",
            "\(identifier: SystemProperty.createdAt) TEXT COLLATE \"C\" NOT NULL",
            "\(identifier: SystemProperty.updatedAt) TEXT COLLATE \"C\" NOT NULL",
            "\(identifier: SystemProperty.version) TEXT COLLATE \"C\" NOT NULL",
            "\(identifier: SystemProperty.deleted) BOOLEAN NOT NULL DEFAULT FALSE",
        ]
        let dialect = PostgresDialect()
        let owner: [SQLFragment] = isPerUser ? ["\(identifier: TableSchema.ownerColumn)"] : []
        let id = dialect.order(dialect.foldedID("\(identifier: SystemProperty.id)"), ascending: true)
        let create: SQLFragment = "CREATE TABLE \(identifier: table) (\(inline: .joined(definitions, separator: ", ")))"
        let key: SQLFragment =
            "CREATE UNIQUE INDEX \(identifier: table + "$id") ON \(identifier: table) (\(inline: .joined(owner + [id], separator: ", ")))"
        return [create, key].map { $0.statement(in: .postgres) } + [updatedAtIndex(table, isPerUser: isPerUser)]
    }

    /// The index of incremental pulls and change watchers: (owner,) `updatedAt`, folded id; a
    /// scope's rows past a stamp are found without reading the others.
    static func updatedAtIndex(_ table: String, isPerUser: Bool) -> SQLStatement {
        let dialect = PostgresDialect()
        let owner: [SQLFragment] = isPerUser ? ["\(identifier: TableSchema.ownerColumn)"] : []
        let id = dialect.order(dialect.foldedID("\(identifier: SystemProperty.id)"), ascending: true)
        let updatedAt = dialect.order("\(identifier: SystemProperty.updatedAt)", ascending: true)
        let index: SQLFragment = """
            CREATE INDEX IF NOT EXISTS \(identifier: table + "$updatedAt") ON \(identifier: table) \
            (\(inline: .joined(owner + [updatedAt, id], separator: ", ")))
            """
        return index.statement(in: .postgres)
    }

    /// Creates the `updatedAt` index of every table that lacks it (a database made before it),
    /// one instance at a time.
    func ensureUpdatedAtIndexes() async throws {
        let names: SQLFragment = "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
        let query = counted(names.statement(in: .postgres))
        let rows = try await leased { connection in try await run(query, on: connection) }
        let existing = Set(rows.compactMap { Self.values($0).first?.1.textValue })
        let missing = schemas.withLock { Array($0.values) }.filter { !existing.contains($0.name + "$updatedAt") }
        guard !missing.isEmpty else { return }
        try await transaction { connection in
            try await lockSetup(on: connection)
            for schema in missing {
                _ = try await run(counted(Self.updatedAtIndex(schema.name, isPerUser: schema.isPerUser)), on: connection)
            }
        }
    }

    /// Takes the advisory lock that serialises the set-up of the database, until the transaction
    /// ends.
    private func lockSetup(on connection: PostgresConnection) async throws {
        let lock = SQLFragment(raw: "SELECT pg_advisory_xact_lock(\(Self.setupLock))")
        _ = try await run(counted(lock.statement(in: .postgres)), on: connection)
    }
}
