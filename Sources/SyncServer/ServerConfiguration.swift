public import Logging
import SyncSQL

/// How the reference server runs.
public struct ServerConfiguration: Sendable {
    /// Where the tables are stored.
    public enum Database: Sendable, Hashable {
        /// An SQLite file (created if missing), served by this process alone.
        case sqlite(path: String)
        /// An SQLite database in memory, gone when the server stops.
        case memory
        /// A PostgreSQL database, which several server instances can share.
        case postgres(PostgresSettings)
    }

    /// The address to listen on (`127.0.0.1` by default).
    public var host: String
    /// The port; 0 picks a free one.
    public var port: Int
    /// Where the tables are stored.
    public var database: Database
    /// The most items one response carries (the server page size; 1,000 by default, the pull's
    /// default request).
    public var pageSize: Int
    /// The largest `$top` accepted; 0 accepts any.
    public var maxTop: Int
    /// Whether DELETE marks rows deleted (and keeps them for incremental pulls) instead of removing them.
    public var softDelete: Bool
    /// The largest request body accepted, in bytes.
    public var maxBodySize: Int
    /// How table requests are authenticated.
    public var authentication: Authentication
    /// The tables whose rows belong to the user who wrote them.
    public var perUserTables: PerUserTables
    /// Where the server logs.
    public var logger: Logger
    /// How `GET /changes` streams look for changes and keep the connection open.
    public var changeStream = ChangeStreamSettings()
    /// The most operations one request of the batch extension may carry (`POST /batch/{table}`,
    /// advertised by `GET /capabilities`); 0 turns the extension off. A thousand: larger batches
    /// cost each operation less on both sides (measured by `sync-bench`), and one batch holds the
    /// write lock of a SQLite table for tens of milliseconds at most.
    public var maxBatchOperations = 1000
    /// How long a request waits for the storage before it is answered 503 with nothing applied:
    /// for a PostgreSQL connection of the pool, or for an SQLite file another process holds
    /// locked (docs/deploy.md, "Storage outages"). Five seconds by default.
    public var storageTimeout: Duration = .seconds(5)
    /// Where the server records its metrics, `nil` (the default) for none; they are served in
    /// the Prometheus text format on their own listener at ``metricsPort`` (docs/deploy.md,
    /// "Metrics"), never on the API's port.
    public var metrics: ServerMetrics?
    /// The port of the metrics listener when ``metrics`` is set (on ``host``); 0 picks a free one.
    public var metricsPort = 0
    /// The largest attachment accepted, in bytes (``defaultMaxAttachmentBytes`` by default): a
    /// metadata row whose `size` is larger is refused with 413.
    public var maxAttachmentBytes = ServerConfiguration.defaultMaxAttachmentBytes
    /// The default of ``maxAttachmentBytes``: 100 MiB.
    public static let defaultMaxAttachmentBytes: Int64 = 100 << 20

    /// A configuration.
    ///
    /// - Parameters:
    ///   - host: The address to listen on.
    ///   - port: The port; 0 picks a free one.
    ///   - database: Where the tables are stored.
    ///   - pageSize: The most items one response carries.
    ///   - maxTop: The largest `$top` accepted; 0 accepts any.
    ///   - softDelete: Whether DELETE marks rows deleted instead of removing them.
    ///   - maxBodySize: The largest request body accepted, in bytes.
    ///   - authentication: How table requests are authenticated.
    ///   - perUserTables: The tables whose rows belong to the user who wrote them.
    ///   - logger: Where the server logs.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, database: Database = .memory, pageSize: Int = 1000, maxTop: Int = 1000,
        softDelete: Bool = true, maxBodySize: Int = 1 << 20, authentication: Authentication = .none,
        perUserTables: PerUserTables = .none, logger: Logger = Logger(label: "sync-server")
    ) {
        self.host = host
        self.port = port
        self.database = database
        self.pageSize = pageSize
        self.maxTop = maxTop
        self.softDelete = softDelete
        self.maxBodySize = maxBodySize
        self.authentication = authentication
        self.perUserTables = perUserTables
        self.logger = logger
    }
}

/// The tables whose rows belong to users: each row to the subject of the identity that
/// inserted it, visible and changeable by that user alone. Names match whatever their ASCII
/// case, as table names do.
public struct PerUserTables: Sendable, Hashable {
    private let names: Set<ColumnKey>
    private let everyTable: Bool

    /// No per-user table: every table is shared.
    public static let none = PerUserTables(names: [], everyTable: false)
    /// Every table is per-user.
    public static let all = PerUserTables(names: [], everyTable: true)

    /// The tables named `names`.
    ///
    /// - Parameter names: Table names.
    /// - Returns: The set.
    public static func named(_ names: some Sequence<String>) -> PerUserTables {
        PerUserTables(names: Set(names.map(ColumnKey.init)), everyTable: false)
    }

    private init(names: Set<ColumnKey>, everyTable: Bool) {
        self.names = names
        self.everyTable = everyTable
    }

    /// Whether `table` is per-user.
    ///
    /// - Parameter table: A table name, in any case.
    /// - Returns: `true` when its rows belong to users.
    public func contains(_ table: String) -> Bool {
        everyTable || names.contains(ColumnKey(table))
    }
}
