import Foundation

/// Where a PostgreSQL database is and how to reach it: `postgres://USER@HOST[:PORT][/DB]`, a
/// password given apart from the URL (a file or `PGPASSWORD`, never the URL or the command
/// line), the size of the connection pool and whether TLS is required.
///
/// Its descriptions never show the password.
public struct PostgresSettings: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// How the connection is encrypted (the URL's `sslmode`).
    public enum TLSMode: String, Sendable, Hashable {
        /// No TLS (the default; meant for a database on the loopback or a private network).
        case disable
        /// TLS, the server's certificate not verified (libpq's `require`).
        case require
        /// TLS, the server's certificate verified against the system's CAs and the host name.
        case verifyFull = "verify-full"
    }

    /// The form of a database URL, for messages.
    static let urlForm = "postgres://USER@HOST[:PORT][/DB]"

    /// The pool size when none is given: twice the cores of a small machine, plus one.
    public static let defaultPoolSize = 5

    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The role to connect as.
    public var user: String
    /// The database.
    public var database: String
    /// The role's password, or `nil` for a server that asks none (trust, peer).
    public var password: String?
    /// The most connections the storage opens.
    public var poolSize: Int
    /// How the connection is encrypted.
    public var tls: TLSMode
    /// How long a statement waits for a connection of the pool before its request is answered
    /// 503 (``StorageUnavailableError``); the server sets it from
    /// ``ServerConfiguration/storageTimeout``.
    public var connectionWait: Duration = .seconds(5)

    /// Settings read from a URL.
    ///
    /// - Parameters:
    ///   - url: `postgres://USER@HOST[:PORT][/DB][?sslmode=disable|require|verify-full]`; the
    ///     database defaults to the user's name.
    ///   - password: The password, read from elsewhere.
    ///   - poolSize: The most connections, at least 1.
    /// - Throws: ``PostgresSettingsError`` for a URL that is not of this form, one with a
    ///   password, or a pool size below 1.
    public init(url: String, password: String? = nil, poolSize: Int = PostgresSettings.defaultPoolSize) throws(PostgresSettingsError) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "postgres" || scheme == "postgresql"
        else { throw .notPostgresURL }
        guard components.password == nil else { throw .passwordInURL }
        guard let user = components.user, !user.isEmpty, let host = components.host, !host.isEmpty else {
            throw .missingUserOrHost
        }
        guard poolSize >= 1 else { throw .invalidPoolSize }
        var tls = TLSMode.disable
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode", let value = item.value, let mode = TLSMode(rawValue: value) else { throw .unsupportedQuery }
            tls = mode
        }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.host = host
        self.port = components.port ?? 5432
        self.user = user
        self.database = path.isEmpty ? user : path
        self.password = password
        self.poolSize = poolSize
        self.tls = tls
    }

    /// The URL without a password: `postgres://user@host:port/database`.
    public var description: String {
        "postgres://\(user)@\(host):\(port)/\(database)\(tls == .disable ? "" : "?sslmode=\(tls.rawValue)")"
    }

    /// As ``description``: no password.
    public var debugDescription: String { description }
}
