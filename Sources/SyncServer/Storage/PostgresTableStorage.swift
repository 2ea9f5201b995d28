import Foundation
public import Logging
import NIOSSL
import PostgresNIO
import SyncSQL
public import SyncWire
import Synchronization

/// Tables in PostgreSQL through vapor/postgres-nio (`PostgresClient`, a pool of connections), for
/// one server or **several instances over one database**. Every SQL string of this engine lives
/// in the `PostgresTableStorage` files or comes from `SQLTranslator` in `PostgresDialect`;
/// identifiers go through `SQLIdentifier.quote`, values are bound.
///
/// How it keeps the ``TableStorage`` contract:
/// - **Metadata.** The table `__ciphersync_tables` has one row per table: its key (the name with
///   ASCII letters folded), its name as first written, and its last `updatedAt` stamp. A name
///   starting with `__` is never a table's, so no table can take it.
/// - **Write order.** A write is one transaction: it locks its table's metadata row
///   (`SELECT … FOR UPDATE`, which every writer of the table in every instance takes), takes
///   `updatedAt = max(now, last + 1 ms)` (``WriteStamp/next(after:now:)``), records it in the row
///   and writes the item in one statement (`RETURNING *`), then commits, releasing the lock.
///   Stamps therefore increase in commit order whatever the instances' clocks.
/// - **Schema.** Tables and columns are created under the same lock, so two instances adding
///   one column (in any ASCII case) add it once; each instance caches the schema and reloads a
///   table's when a request names a table or column it does not know (another instance made
///   it). A table or column made inside a transaction of several writes (``inTransaction(_:)``)
///   joins the cache when that transaction commits, never before. Column types: text and JSON
///   text `COLLATE "C"` (byte order, as SQLite), integers `numeric` (an integer column also
///   keeps a fractional number, as SQLite's does), reals `double precision`, Booleans `boolean`;
///   JSON columns have the domain `__ciphersync_json`.
/// - **Ids.** A table is keyed by a unique index on `lower(id COLLATE "C")` (ASCII letters
///   folded and no others, as `ItemID/sameItem(_:_:)`), owner first for a per-user table;
///   every lookup and `$filter` comparison uses the same expression.
/// - **Owners.** A per-user table has the column ``TableSchema/ownerColumn``; every statement of
///   a scoped call has `"$owner" = $n` in its `WHERE`.
///
/// A class whose state (the schema cache) sits behind a `Mutex`; safe to share.
public final class PostgresTableStorage: TableStorage {
    let client: PostgresClient
    let settings: PostgresSettings
    let logger: Logger
    let observer: (any WriteObserver)?
    /// The client's background task; cancelled by ``close()``.
    private let running: Task<Void, Never>
    /// Every table known to this instance, by key (ASCII case folded).
    let schemas = Mutex<[ColumnKey: TableSchema]>([:])
    /// Whether ``close()`` ran.
    private let closed = Atomic<Bool>(false)
    /// Where committed writes are announced: this instance's own at commit, other instances'
    /// when their `NOTIFY` arrives on the listening connection.
    public let changeFeed: ChangeFeed? = ChangeFeed()
    /// The statements sent to PostgreSQL through the pool since the storage opened (the listening
    /// connection sends one `LISTEN` per connection).
    package let statements = StatementCounter()
    /// The number of statements sent to PostgreSQL through the pool since the storage opened:
    /// what `sync-bench` (a package of its own) reads of `statements`.
    @_spi(Benchmarks) public var statementCount: Int { statements.count }
    /// This instance's name in its notifications (it ignores its own).
    let instance = UUID().uuidString
    /// The listening connection's task; cancelled by ``close()``.
    private let listener = Mutex<Task<Void, Never>?>(nil)

    /// The longest name PostgreSQL keeps (longer ones are cut, so two could become one).
    static let maximumNameBytes = 63
    /// The longest table name: an index name is the table's plus `$updatedAt`.
    static let maximumTableNameBytes = maximumNameBytes - 10
    /// How long ``ping()`` waits for an answer.
    static let pingTimeout: Duration = .seconds(3)

    /// Connects to the database, creates the metadata table and the JSON domain if they are
    /// missing, and loads the schema.
    ///
    /// - Parameters:
    ///   - settings: Where the database is, the password and the pool size.
    ///   - logger: Where the driver logs.
    /// - Returns: The open storage.
    /// - Throws: PostgresNIO's errors (no connection, authentication, permissions).
    public static func open(_ settings: PostgresSettings, logger: Logger) async throws -> PostgresTableStorage {
        try await open(settings, logger: logger, observer: nil)
    }

    /// Opens the storage as ``open(_:logger:)`` does, with an observer that sees the steps of every
    /// write and the listening connection's events (tests).
    package static func open(
        _ settings: PostgresSettings, logger: Logger, observer: (any WriteObserver)?
    ) async throws -> PostgresTableStorage {
        var configuration = PostgresClient.Configuration(
            host: settings.host, port: settings.port, username: settings.user, password: settings.password,
            database: settings.database, tls: try tls(settings.tls))
        configuration.options.maximumConnections = settings.poolSize
        configuration.options.connectTimeout = .seconds(5)
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let storage = PostgresTableStorage(client: client, settings: settings, logger: logger, observer: observer)
        do {
            try await storage.prepareDatabase()
            try await storage.reloadSchemas()
            try await storage.ensureUpdatedAtIndexes()
            let listening = PostgresConnection.Configuration(
                host: settings.host, port: settings.port, username: settings.user, password: settings.password,
                database: settings.database,
                tls: try tlsConfiguration(settings.tls).map { .require(try NIOSSLContext(configuration: $0)) } ?? .disable)
            let (instance, feed) = (storage.instance, storage.changeFeed ?? ChangeFeed())
            storage.listener.withLock {
                $0 = Task { await listen(listening, instance: instance, feed: feed, observer: observer, logger: logger) }
            }
            return storage
        } catch {
            try? await storage.close()
            throw error
        }
    }

    private init(client: PostgresClient, settings: PostgresSettings, logger: Logger, observer: (any WriteObserver)?) {
        self.client = client
        self.settings = settings
        self.logger = logger
        self.observer = observer
        // Started before the first query, as the client requires.
        running = Task { await client.run() }
    }

    private static func tls(_ mode: PostgresSettings.TLSMode) throws -> PostgresClient.Configuration.TLS {
        try tlsConfiguration(mode).map { .require($0) } ?? .disable
    }

    /// The TLS of a mode, `nil` for none.
    private static func tlsConfiguration(_ mode: PostgresSettings.TLSMode) throws -> TLSConfiguration? {
        switch mode {
        case .disable: return nil
        case .require:
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .none
            return configuration
        case .verifyFull: return .makeClientConfiguration()
        }
    }

    // MARK: TableStorage

    public func ping() async throws {
        guard !closed.load(ordering: .acquiring) else { throw PostgresStorageError.closed }
        // Not waited for past the timeout: a lease the pool never answers cannot hold `/health`.
        try await Deadline.run(within: Self.pingTimeout, failing: PostgresStorageError.noAnswer) { [self] in
            _ = try await client.withConnection { connection in try await run(counted(SQLStatement("SELECT 1")), on: connection) }
        }
    }

    public func tables() async throws -> [TableSchema] {
        try await reloadSchemas()
        return schemas.withLock { Array($0.values) }
    }

    public func schema(of table: String) async throws -> TableSchema? {
        if let known = transactionSchema(of: ColumnKey(table)) ?? schemas.withLock({ $0[ColumnKey(table)] }) { return known }
        return try await reloadSchema(of: table)
    }

    public func select(_ query: QueryDescription, scope: RowScope, extraFilter: FilterExpression?) async throws -> [JSONObject] {
        guard
            let translated = try await translate(
                query.table, scope, { (translator) throws(QueryError) in try translator.select(query, extraFilter: extraFilter) })
        else {
            return []
        }
        return try await Self.evaluatingFilter { try await rows(translated.0, translated.1) }
    }

    public func count(_ query: QueryDescription, scope: RowScope, extraFilter: FilterExpression?) async throws -> Int {
        guard
            let translated = try await translate(
                query.table, scope, { (translator) throws(QueryError) in try translator.count(query, extraFilter: extraFilter) })
        else { return 0 }
        return try await Self.evaluatingFilter {
            let query = counted(translated.0)
            let rows = try await leased { connection in try await run(query, on: connection) }
            let values = rows.first.map { Self.values($0) }
            return values?.first?.1.integerValue.map { Int($0) } ?? 0
        }
    }

    public func row(table: String, id: String, scope: RowScope) async throws -> JSONObject? {
        guard let schema = try await scoped(table, scope) else { return nil }
        return try await current(schema, id: id, scope: scope)
    }

    public func close() async throws {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if let listening = listener.withLock({ $0 }) {
            listening.cancel()
            await listening.value
        }
        running.cancel()
        await running.value
    }

    // MARK: helpers

    /// The schema of `table` if it exists, checked against the scope's kind.
    func scoped(_ table: String, _ scope: RowScope) async throws -> TableSchema? {
        guard let schema = try await schema(of: table) else { return nil }
        try schema.check(scope)
        return schema
    }

    /// A statement of the table's translator, with the schema it was written for; `nil` when the
    /// table does not exist. A query naming a column this instance does not know reloads the
    /// table's schema once (another instance may have added it).
    private func translate(
        _ table: String, _ scope: RowScope, _ make: (SQLTranslator) throws(QueryError) -> SQLStatement
    ) async throws -> (SQLStatement, TableSchema)? {
        guard let schema = try await scoped(table, scope) else { return nil }
        do {
            return (try make(translator(schema, scope)), schema)
        } catch {
            guard let fresh = try await reloadSchema(of: schema.name), fresh != schema else { throw error }
            return (try make(translator(fresh, scope)), fresh)
        }
    }

    /// The translator of a table's queries, restricted to the scope's owner.
    func translator(_ schema: TableSchema, _ scope: RowScope) -> SQLTranslator {
        SQLTranslator(table: schema.name, columns: schema.columns, dialect: .postgres, restriction: scope.ownerCondition)
    }

    /// The condition that finds the row `id` of the scope: ids compared folded, as the key
    /// index folds them.
    static func key(_ id: String, _ scope: RowScope) -> SQLFragment {
        let dialect = PostgresDialect()
        let match: SQLFragment = "\(dialect.foldedID("\(identifier: SystemProperty.id)")) = \(dialect.foldedID(.bind(.text(id))))"
        guard let owner = scope.ownerCondition else { return match }
        return .joined([owner, match], separator: " AND ")
    }

    /// The row of the scope with `id`.
    func current(_ schema: TableSchema, id: String, scope: RowScope) async throws -> JSONObject? {
        let sql: SQLFragment = "SELECT * FROM \(identifier: schema.name) WHERE \(inline: Self.key(id, scope))"
        return try await rows(sql.statement(in: .postgres), schema).first
    }

    /// The rows a statement returns, as items (the owner column left out). A column the cached
    /// schema lacks (another instance added it) reloads the schema first, so its type is known.
    func rows(_ statement: SQLStatement, _ schema: TableSchema, on connection: PostgresConnection? = nil) async throws -> [JSONObject] {
        let query = counted(statement)
        let rows: [PostgresRow]
        if let connection {
            rows = try await run(query, on: connection)
        } else {
            rows = try await leased { connection in try await run(query, on: connection) }
        }
        var schema = schema
        if let first = rows.first, first.contains(where: { $0.columnName != TableSchema.ownerColumn && schema.columns[$0.columnName] == nil }) {
            schema = try await reloadSchema(of: schema.name, on: connection) ?? schema
        }
        return rows.map { row in
            var item: JSONObject = [:]
            for (name, value) in Self.values(row) where name != TableSchema.ownerColumn {
                item[name] = JSONValue(sql: value, type: schema.columns[name])
            }
            return item
        }
    }

    /// Runs a query whose filter came from a request: an error PostgreSQL raises while
    /// evaluating it (a type it cannot compare, a number out of range, a negative length) is the
    /// filter's fault, a ``QueryError`` (400), not the server's.
    static func evaluatingFilter<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PSQLError {
            guard let state = error.serverInfo?[.sqlState], state.hasPrefix("22") || state.hasPrefix("42") else { throw error }
            throw QueryError("the filter cannot be evaluated: \(error.serverInfo?[.message] ?? state)")
        }
    }
}
