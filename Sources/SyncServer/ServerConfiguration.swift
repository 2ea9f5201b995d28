public import Logging

/// How the reference server runs.
public struct ServerConfiguration: Sendable {
    /// Where the tables are stored.
    public enum Database: Sendable, Hashable {
        /// An SQLite file (created if missing).
        case sqlite(path: String)
        /// An SQLite database in memory, gone when the server stops.
        case memory
    }

    /// The address to listen on (`127.0.0.1` by default).
    public var host: String
    /// The port; 0 picks a free one.
    public var port: Int
    public var database: Database
    /// The most items one response carries (the server page size).
    public var pageSize: Int
    /// The largest `$top` accepted; 0 accepts any.
    public var maxTop: Int
    /// Whether DELETE marks rows deleted (and keeps them for incremental pulls) instead of removing them.
    public var softDelete: Bool
    /// The largest request body accepted, in bytes.
    public var maxBodySize: Int
    /// The `X-ZUMO-AUTH` token every table request must carry; `nil` lets every request in.
    public var authenticationToken: String?
    public var logger: Logger

    public init(
        host: String = "127.0.0.1", port: Int = 8080, database: Database = .memory, pageSize: Int = 50, maxTop: Int = 1000,
        softDelete: Bool = true, maxBodySize: Int = 1 << 20, authenticationToken: String? = nil,
        logger: Logger = Logger(label: "sync-server")
    ) {
        self.host = host
        self.port = port
        self.database = database
        self.pageSize = pageSize
        self.maxTop = maxTop
        self.softDelete = softDelete
        self.maxBodySize = maxBodySize
        self.authenticationToken = authenticationToken
        self.logger = logger
    }
}
