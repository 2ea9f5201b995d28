import Foundation
public import Logging
public import SyncSQL
public import SyncWire

/// Tables in SQLite: vapor/sqlite-nio's SQLite (3.54, symbols prefixed, so it shares a process
/// with SQLCipher) through `ServerSQLite`. Every SQL string of this engine lives in the
/// `SQLiteTableStorage` files or comes from `SQLTranslator` in SQLite's dialect; identifiers go
/// through `SQLIdentifier.quote`.
///
/// How it keeps the ``TableStorage`` contract:
/// - **Write order.** A write is one statement (in memory its own transaction; in a file, one of
///   the writes of a commit group, acknowledged once that commits) and takes its `updatedAt`
///   itself: it calls the function `ciphersync_stamp(table)`, which returns
///   `max(now, last + 1 ms)` from the table's last stamp (``StampClock``, started from the
///   table's newest `updatedAt` when the file opens) and records it. SQLite runs one statement at
///   a time on the connection, under its write lock, so stamps increase in the order writes
///   become visible. A database file is served by **one process** (the last stamps live in it;
///   several instances need PostgreSQL).
/// - **Ids.** The `id` column is `COLLATE NOCASE` (SQLite folds ASCII letters only), so the key,
///   every lookup and every `$filter` comparison ignore ASCII case. Files made before ids were
///   folded are rebuilt when opened (``open(_:logger:lockWait:)``).
/// - **Owners.** A per-user table has the column ``TableSchema/ownerColumn`` and the key
///   (owner, id); every statement of a scoped call has `"$owner" = ?` in its `WHERE`.
///
/// An actor; safe to share. Its one connection runs each statement on the actor, at once: a
/// statement holds the actor's thread for its time (memory: microseconds; a file's commit: its
/// sync), and no other statement of this storage runs meanwhile, as SQLite's one writer would
/// have it anyway.
public actor SQLiteTableStorage: TableStorage {
    let connection: ServerSQLite
    let observer: (any WriteObserver)?
    /// Every table, by name matched as SQLite matches it (ASCII case folded).
    var schemas: [ColumnKey: TableSchema] = [:]
    /// Each table's last `updatedAt`, read and advanced by the write statements.
    let clock: StampClock
    /// How long a write waits for SQLite's write lock (another process holding the file) before
    /// it fails with ``StorageUnavailableError`` (``locking(by:_:)``).
    let lockWait: Duration
    /// Schema changes run one at a time (the actor alone would interleave them at each await).
    let schemaGate = AsyncSerialGate()
    /// Writes and schema changes take turns here while a batch transaction holds it
    /// (``inTransaction(_:)``), so that no other caller's write joins the batch's transaction.
    let writeGate = AsyncSerialGate()
    /// The rows of the running batch of one table's writes
    /// (``inTransaction(table:scope:ids:_:)``), `nil` outside one.
    var batchRows: BatchRows?
    /// The SQL text of each shape of single write seen lately (see ``WriteShape``).
    var writeTexts: [WriteShape: String] = [:]
    /// Whether single writes share commits (tables in a file; see `CommitGroup`).
    let groupsCommits: Bool
    /// The transaction the single writes of a file run in until it commits, `nil` when none is open.
    var commitGroup: CommitGroup?
    /// The storage whose batch transaction the current task runs in, if any.
    @TaskLocal static var transactionOwner: ObjectIdentifier?
    /// The changes of the running batch transaction, announced once it commits.
    var pendingChanges: [TableChange] = []
    /// Where the committed writes are announced (one process serves a file: no other instance
    /// writes it).
    public nonisolated let changeFeed: ChangeFeed? = ChangeFeed()
    /// The statements sent to SQLite since the storage opened.
    package nonisolated let statements = StatementCounter()
    /// The number of statements sent to SQLite since the storage opened: what `sync-bench` (a
    /// package of its own) reads of `statements`.
    @_spi(Benchmarks) public nonisolated var statementCount: Int { statements.count }
    /// Where attachment content is kept: in memory for a database in memory, else in a
    /// directory beside the file.
    nonisolated let attachmentContent: any AttachmentContentStore

    /// Opens (or creates) the database, rebuilds the tables of a file made before ids were
    /// folded, and loads the schema.
    ///
    /// - Parameters:
    ///   - database: The file, or memory.
    ///   - logger: Where the opening is logged (debug).
    ///   - lockWait: How long a write waits for a lock another process holds on the file.
    /// - Returns: The open storage.
    /// - Throws: ``TableStorageError/idsDifferingOnlyByCase(table:count:)`` when a table of an
    ///   existing file cannot be folded (nothing is changed then); ``ServerSQLiteError``.
    public static func open(
        _ database: ServerConfiguration.Database, logger: Logger, lockWait: Duration = .seconds(5)
    ) async throws -> SQLiteTableStorage {
        try await open(database, logger: logger, observer: nil, lockWait: lockWait)
    }

    /// Opens the storage as ``open(_:logger:lockWait:)`` does, with an observer that sees the steps
    /// of every write (tests).
    package static func open(
        _ database: ServerConfiguration.Database, logger: Logger, observer: (any WriteObserver)?, lockWait: Duration = .seconds(5)
    ) async throws -> SQLiteTableStorage {
        let path: String
        switch database {
        case .memory: path = ":memory:"
        case .sqlite(let file): path = file
        case .postgres: throw NotSQLite()
        }
        let store = try SQLiteTableStorage(path: path, observer: observer, lockWait: lockWait)
        do {
            try await store.start()
        } catch {
            try? await store.close()
            throw error
        }
        logger.debug("Opened the SQLite database", metadata: ["path": .string(path)])
        return store
    }

    /// A database that is not SQLite's (open it with its own storage).
    struct NotSQLite: Error {}

    /// A write of a batch names a property with no column (a caller skipped ``ensureColumns(_:scope:_:)``).
    struct BatchColumnMissing: Error {}

    /// The SQL function that stamps a write: `ciphersync_stamp(table)`.
    static let stampFunction = "ciphersync_stamp"

    private init(path: String, observer: (any WriteObserver)?, lockWait: Duration) throws {
        connection = try ServerSQLite(path: path, statements: statements)
        connection.waitForLocks(upTo: lockWait)
        self.lockWait = lockWait
        groupsCommits = path != ":memory:"
        attachmentContent = path == ":memory:" ? MemoryAttachmentContent() : DirectoryAttachmentContent(database: path)
        clock = StampClock()
        self.observer = observer
    }

    /// Sets the journal mode, installs the stamp function, folds the ids of old files and loads
    /// the schema.
    private func start() async throws {
        _ = try connection.query("PRAGMA journal_mode = WAL")
        try connection.install(function: Self.stampFunction) { [clock] table in clock.next(for: table) }
        try createRemovalsTable()
        for name in try tableNames() {
            try await foldIDsIfNeeded(name)
            let schema = try readSchema(name)
            schemas[ColumnKey(name)] = schema
            try connection.run(Self.updatedAtIndex(name, isPerUser: schema.isPerUser).sql)
            let latest: SQLFragment = "SELECT max(\(identifier: SystemProperty.updatedAt)) AS latest FROM \(identifier: name)"
            let stamp = try connection.query(latest.statement(in: .sqlite).sql).first("latest")?.textValue
            // A hard delete's stamp stays in the removals table only: the next write stamps past it.
            let stamps = [stamp, try newestRemoval(of: name)].compactMap { $0.flatMap(WireDate.milliseconds(from:)) }
            clock.start(at: stamps.max(), for: name)
        }
    }

    /// The names of the database's tables (the record of owners' columns, ``OwnerColumns``, included).
    private func tableNames() throws -> [String] {
        try connection.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
            .rows.compactMap { $0.first?.textValue }.filter { TableName.isServed($0) || $0 == OwnerColumns.table }
    }

    /// Reads every table's schema again, after a rolled-back batch undid the tables and columns it
    /// had created: the cached schemas must not name them.
    func rereadSchemas() throws {
        var reread: [ColumnKey: TableSchema] = [:]
        for name in try tableNames() { reread[ColumnKey(name)] = try readSchema(name) }
        schemas = reread
    }

    /// The schema of `name` as the database declares it.
    func readSchema(_ name: String) throws -> TableSchema {
        var columns: [String: ColumnType] = [:]
        var isPerUser = false
        for info in try connection.query("SELECT name, type FROM pragma_table_info(?)", [.text(name)]).rows {
            guard let column = info[0].textValue else { continue }
            if column == TableSchema.ownerColumn {
                isPerUser = true
            } else {
                columns[column] = ColumnType(declared: info[1].textValue ?? "") ?? .text
            }
        }
        return TableSchema(name: name, columns: columns, isPerUser: isPerUser)
    }

    // MARK: TableStorage

    public func ping() async throws {
        _ = try connection.query("SELECT 1")
    }

    public func tables() -> [TableSchema] { Array(schemas.values) }

    public func schema(of table: String) -> TableSchema? { schemas[ColumnKey(table)] }

    public func ensureColumns(_ table: String, scope: RowScope, _ columns: [String: ColumnType]) async throws -> TableSchema {
        if let existing = schemas[ColumnKey(table)] {
            try existing.check(scope)
            if existing.missingColumns(columns).isEmpty { return existing }
        }
        // The write gate first, then the schema gate: a batch holds the first while it changes a schema.
        let deadline = lockDeadline()
        return try await alone {
            try await schemaGate.withTurn { try await locking(by: deadline) { try changeSchema(table, scope: scope, columns) } }
        }
    }

    public func select(_ query: QueryDescription, scope: RowScope, extraFilter: FilterExpression?) async throws -> [JSONObject] {
        guard let schema = try scoped(query.table, scope) else { return [] }
        settleCommitGroup()
        let statement = try translator(schema, scope).select(query, extraFilter: extraFilter)
        return try rows(statement, schema)
    }

    public func count(_ query: QueryDescription, scope: RowScope, extraFilter: FilterExpression?) async throws -> Int {
        guard let schema = try scoped(query.table, scope) else { return 0 }
        settleCommitGroup()
        let statement = try translator(schema, scope).count(query, extraFilter: extraFilter)
        let rows = try connection.query(statement.sql, statement.arguments).rows
        return rows.first?.first?.integerValue.map(Int.init) ?? 0
    }

    public func row(table: String, id: String, scope: RowScope) async throws -> JSONObject? {
        guard let schema = try scoped(table, scope) else { return nil }
        if batchRows(table, scope) != nil { return try batchRow(id, schema, scope).map { Self.item($0, schema) } }
        settleCommitGroup()
        let sql: SQLFragment = "SELECT * FROM \(identifier: schema.name) WHERE \(inline: Self.key(id, scope))"
        return try rows(sql.statement(in: .sqlite), schema).first
    }

    public func inTransaction<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        let deadline = lockDeadline()
        return try await alone {
            settleCommitGroup()
            pendingChanges = []
            do {
                let result = try await transaction(lockedBy: deadline) {
                    try await Self.$transactionOwner.withValue(ObjectIdentifier(self)) { try await body() }
                }
                for change in pendingChanges { changeFeed?.publish(change) }
                pendingChanges = []
                return result
            } catch {
                pendingChanges = []
                try? rereadSchemas()
                throw error
            }
        }
    }

    /// Announces a committed write, or keeps it until the batch transaction it belongs to
    /// commits.
    func announce(_ change: TableChange) {
        if Self.transactionOwner == ObjectIdentifier(self) {
            pendingChanges.append(change)
        } else {
            changeFeed?.publish(change)
        }
    }

    public func close() async throws {
        settleCommitGroup()
        connection.close()
    }

    // MARK: helpers

    /// Runs `body` between `BEGIN IMMEDIATE` and `COMMIT`; rolls back when it or the commit fails.
    /// `body` runs on this actor, whatever it captures (``alone(_:)`` says why). The write lock is
    /// waited for until `deadline` at most (``locking(by:_:)``).
    func transaction<T>(
        lockedBy deadline: ContinuousClock.Instant? = nil, _ body: nonisolated(nonsending) () async throws -> T
    ) async throws -> T {
        try await locking(by: deadline ?? lockDeadline()) { try connection.run("BEGIN IMMEDIATE") }
        do {
            let result = try await body()
            try connection.run("COMMIT")
            return result
        } catch {
            try? connection.run("ROLLBACK")
            throw error
        }
    }

    /// Runs a write alone: inside this storage's batch transaction at once, otherwise in its turn
    /// of the write gate (after a running batch has committed).
    ///
    /// `body` runs on this actor even when it touches none of its state (`{ try statement() }`):
    /// a plain async closure that captures nothing isolated would run on the global executor, and
    /// use the one connection beside the actor's other statements.
    func alone<T>(_ body: nonisolated(nonsending) () async throws -> T) async throws -> T {
        if Self.transactionOwner == ObjectIdentifier(self) { return try await body() }
        return try await writeGate.withTurn { try await body() }
    }

    /// The schema of `table` if it exists, checked against the scope's kind.
    func scoped(_ table: String, _ scope: RowScope) throws -> TableSchema? {
        guard let schema = schemas[ColumnKey(table)] else { return nil }
        try schema.check(scope)
        return schema
    }

    /// The translator of a table's queries, restricted to the scope's owner.
    func translator(_ schema: TableSchema, _ scope: RowScope) -> SQLTranslator {
        SQLTranslator(table: schema.name, columns: schema.columns, dialect: .sqlite, restriction: scope.ownerCondition)
    }

    /// The condition that finds the row `id` of the scope (the column's collation folds case).
    static func key(_ id: String, _ scope: RowScope) -> SQLFragment {
        let match: SQLFragment = "\(identifier: SystemProperty.id) = \(bind: .text(id))"
        guard let owner = scope.ownerCondition else { return match }
        return .joined([owner, match], separator: " AND ")
    }

    /// Creates the table if it is new and adds the columns it lacks; runs alone.
    /// Creates the table if it is new and adds the columns it lacks, all under one savepoint: a
    /// statement that fails, or a crash, never leaves a table with only some of its columns (a
    /// query naming one of the others would be refused as naming an unknown column).
    private func changeSchema(_ table: String, scope: RowScope, _ columns: [String: ColumnType]) throws -> TableSchema {
        let key = ColumnKey(table)
        try connection.run("SAVEPOINT change_schema")
        do {
            var schema: TableSchema
            if let existing = schemas[key] {
                schema = existing
            } else {
                for statement in Self.createTable(table, isPerUser: scope.owner != nil, columns: []) {
                    try connection.run(statement.sql)
                }
                schema = try readSchema(table)
            }
            try schema.check(scope)
            for (name, type) in schema.missingColumns(columns) {
                let sql: SQLFragment =
                    "ALTER TABLE \(identifier: schema.name) ADD COLUMN \(identifier: name) \(inline: SQLFragment(raw: type.rawValue))"
                try connection.run(sql.statement(in: .sqlite).sql)
                schema.columns[name] = type
            }
            try connection.run("RELEASE change_schema")
            schemas[key] = schema
            return schema
        } catch {
            _ = try? connection.run("ROLLBACK TO change_schema")
            _ = try? connection.run("RELEASE change_schema")
            throw error
        }
    }

    /// The statements that create a table and its `updatedAt` index: the system columns (the
    /// id folding ASCII case), the owner column and key of a per-user table, then `columns`.
    static func createTable(_ table: String, isPerUser: Bool, columns: [(String, String)]) -> [SQLStatement] {
        var definitions: [SQLFragment] = []
        if isPerUser { definitions.append("\(identifier: TableSchema.ownerColumn) TEXT NOT NULL") }
        definitions += [
            "\(identifier: SystemProperty.id) TEXT NOT NULL COLLATE NOCASE",
            "\(identifier: SystemProperty.createdAt) TEXT NOT NULL",
            "\(identifier: SystemProperty.updatedAt) TEXT NOT NULL",
            "\(identifier: SystemProperty.version) TEXT NOT NULL",
            "\(identifier: SystemProperty.deleted) BOOLEAN NOT NULL DEFAULT 0",
        ]
        for (name, type) in columns { definitions.append("\(identifier: name) \(inline: SQLFragment(raw: type))") }
        let keyColumns: [SQLFragment] =
            (isPerUser ? [TableSchema.ownerColumn] : []).map { "\(identifier: $0)" } + ["\(identifier: SystemProperty.id)"]
        definitions.append("PRIMARY KEY (\(inline: .joined(keyColumns, separator: ", ")))")
        let create: SQLFragment = "CREATE TABLE IF NOT EXISTS \(identifier: table) (\(inline: .joined(definitions, separator: ", ")))"
        return [create.statement(in: .sqlite), updatedAtIndex(table, isPerUser: isPerUser)]
    }

    /// The index of incremental pulls and change watchers: (owner,) `updatedAt`, so a scope's
    /// rows past a stamp are found without reading the others. Created with the table, and when a
    /// file made before it is opened.
    static func updatedAtIndex(_ table: String, isPerUser: Bool) -> SQLStatement {
        let owner: [SQLFragment] = isPerUser ? ["\(identifier: TableSchema.ownerColumn)"] : []
        let indexed = owner + ["\(identifier: SystemProperty.updatedAt)"]
        let index: SQLFragment =
            "CREATE INDEX IF NOT EXISTS \(identifier: table + "_updatedAt") ON \(identifier: table) (\(inline: .joined(indexed, separator: ", ")))"
        return index.statement(in: .sqlite)
    }

    /// The rows a statement returns, as items (the owner column left out).
    func rows(_ statement: SQLStatement, _ schema: TableSchema) throws -> [JSONObject] {
        var items: [JSONObject] = []
        var names: [String] = []
        try connection.run(statement.sql, statement.arguments) { row in
            if names.isEmpty { names = row.columnNames }
            var item = JSONObject(minimumCapacity: names.count)
            for (index, name) in names.enumerated() where name != TableSchema.ownerColumn {
                item[name] = JSONValue(sql: row.value(at: index), type: schema.columns[name])
            }
            items.append(item)
        }
        return items
    }
}
