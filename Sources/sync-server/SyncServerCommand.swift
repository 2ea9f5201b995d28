import ArgumentParser
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import SyncServer
import SyncWire
import Synchronization
import UnixSignals

/// `sync-server`: the reference backend of the tables protocol.
struct SyncServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-server", abstract: "Runs the CipherSync reference sync server (Mobile Apps tables protocol, G2).")

    @Option(help: "The address to listen on.") var host = "127.0.0.1"
    @Option(help: "The port to listen on; 0 picks a free one.") var port = 8080
    @Option(help: "Where to store tables: sqlite:PATH, memory, or postgres://USER@HOST[:PORT][/DB] (no password in it).")
    var database = "memory"
    @Option(
        help: ArgumentHelp(
            "With postgres://: the database password, from the first line of this file (else PGPASSWORD).", valueName: "path"))
    var databasePasswordFile: String?
    @Option(help: ArgumentHelp("With postgres://: the most connections to the database.", valueName: "n"))
    var databasePoolSize = PostgresSettings.defaultPoolSize
    @Option(help: "The most items in one response.") var pageSize = 1000
    @Option(help: "The largest $top accepted; 0 accepts any.") var maxTop = 1000
    @Flag(inversion: .prefixedNo, help: "Keep deleted rows marked deleted (for incremental pulls).") var softDelete = true
    @Option(help: "Log level: trace, debug, info, notice, warning, error.") var logLevel = "info"
    @Option(
        help: ArgumentHelp(
            "Require this X-ZUMO-AUTH token (the first line of the file) on every table request.", valueName: "path"))
    var authTokenFile: String?
    @Option(
        help: ArgumentHelp(
            "Verify HS256 sign-in tokens with the key in this file (its first line, at least 32 bytes).", valueName: "path"))
    var jwtSecretFile: String?
    @Option(
        help: ArgumentHelp(
            "Verify RS256 and ES256 sign-in tokens with the public keys of this JWK Set (chosen by kid).", valueName: "path"))
    var jwksFile: String?
    @Option(help: ArgumentHelp("With a JWT key: the issuer (iss) every token must name.", valueName: "issuer"))
    var jwtIssuer: String?
    @Option(help: ArgumentHelp("With a JWT key: an audience (aud) every token must name.", valueName: "audience"))
    var jwtAudience: String?
    @Option(
        name: .customLong("per-user-table"),
        help: ArgumentHelp(
            "A table whose rows belong to the signed-in user who wrote them (repeatable).", valueName: "table"))
    var perUserTable: [String] = []
    @Option(help: ArgumentHelp("'all' makes every table per-user.", valueName: "all"))
    var perUserTables: String?
    @Option(
        help: ArgumentHelp(
            "Ignored: change streams no longer poll the database (accepted so that existing command lines still start).",
            valueName: "ms", visibility: .hidden))
    var changePollInterval = 250
    @Option(
        help: ArgumentHelp(
            "The most operations one POST /batch/{table} may carry (the batch extension, advertised by GET /capabilities); 0 turns it off.",
            valueName: "n"))
    var maxBatchOperations = 1000
    @Option(
        help: ArgumentHelp(
            "How long a request waits for the storage (a PostgreSQL connection, a locked SQLite file) before it is answered 503, nothing applied (milliseconds).",
            valueName: "ms"))
    var storageTimeout = 5000
    @Option(
        help: ArgumentHelp(
            "Serve GET /metrics (Prometheus text format) on this port of --host, apart from the API; off without it. 0 picks a free one.",
            valueName: "port"))
    var metricsPort: Int?
    @Option(
        help: ArgumentHelp(
            "The largest attachment accepted, in bytes (default 100 MiB): a larger one is refused with 413.", valueName: "n"))
    var maxAttachmentBytes = ServerConfiguration.defaultMaxAttachmentBytes

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard pageSize > 0 else { throw ValidationError("--page-size must be positive") }
        guard maxTop >= 0 else { throw ValidationError("--max-top must not be negative") }
        guard (0...10_000).contains(maxBatchOperations) else { throw ValidationError("--max-batch-operations must be 0 to 10000") }
        guard (10...60_000).contains(changePollInterval) else { throw ValidationError("--change-poll-interval must be 10 to 60000 ms") }
        guard (100...600_000).contains(storageTimeout) else { throw ValidationError("--storage-timeout must be 100 to 600000 ms") }
        guard maxAttachmentBytes >= 0 else { throw ValidationError("--max-attachment-bytes must not be negative") }
        if let metricsPort {
            guard (0...65535).contains(metricsPort) else { throw ValidationError("--metrics-port must be between 0 and 65535") }
            guard metricsPort != port || port == 0 else { throw ValidationError("--metrics-port must differ from --port") }
        }
        _ = try parsedDatabase()
        _ = try authToken()
        _ = try jwtConfiguration()
        _ = try parsedPerUserTables()
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
    }

    /// Whether Swift concurrency's jobs should run on the event loops: not when every commit
    /// waits for a file's sync (see `main.swift`). Read from the option's text alone (a
    /// PostgreSQL password file is not read again).
    var tasksRunOnEventLoops: Bool { !database.hasPrefix("sqlite:") }

    func parsedDatabase() throws -> ServerConfiguration.Database {
        let isPostgres = database.hasPrefix("postgres://") || database.hasPrefix("postgresql://")
        if !isPostgres, databasePasswordFile != nil { throw ValidationError("--database-password-file needs a postgres:// --database") }
        if database == "memory" { return .memory }
        if database.hasPrefix("sqlite:"), database.count > 7 { return .sqlite(path: String(database.dropFirst(7))) }
        guard isPostgres else { throw ValidationError("--database must be sqlite:PATH, memory or postgres://USER@HOST[:PORT][/DB]") }
        do {
            return .postgres(
                try PostgresSettings(url: database, password: try DatabasePassword.read(file: databasePasswordFile), poolSize: databasePoolSize))
        } catch {
            throw ValidationError("\(error)")
        }
    }

    func parsedPerUserTables() throws -> PerUserTables {
        if let perUserTables {
            guard perUserTables == "all" else { throw ValidationError("--per-user-tables takes 'all'; name tables with --per-user-table") }
            guard perUserTable.isEmpty else { throw ValidationError("--per-user-tables all and --per-user-table exclude each other") }
            return .all
        }
        for table in perUserTable where !TableName.isValid(table) {
            throw ValidationError("--per-user-table '\(table.prefix(64))' is not a valid table name")
        }
        return perUserTable.isEmpty ? .none : .named(perUserTable)
    }

    /// The JWT verification the flags ask for, if any; at most one way to authenticate.
    func jwtConfiguration() throws -> JWTConfiguration? {
        let configuration: JWTConfiguration?
        do {
            configuration = try JWTConfiguration.fromOptions(
                secretFile: jwtSecretFile, jwksFile: jwksFile, issuer: jwtIssuer, audience: jwtAudience)
        } catch {
            throw ValidationError(error.message)
        }
        if configuration != nil, authTokenFile != nil {
            throw ValidationError("--auth-token-file and a JWT key (--jwt-secret-file, --jwks-file) exclude each other")
        }
        return configuration
    }

    /// How table requests are authenticated: a JWT verifier (its keys loaded now, once), a shared
    /// token, or not at all.
    func authentication() async throws -> Authentication {
        if let configuration = try jwtConfiguration() {
            do {
                return .verifier(try await JWTVerifier.load(configuration))
            } catch {
                throw ValidationError(error.message)
            }
        }
        return try authToken().map(Authentication.sharedToken) ?? .none
    }

    /// The token of `--auth-token-file`: its first line, which may not be empty.
    func authToken() throws -> String? {
        guard let authTokenFile else { return nil }
        guard let text = try? String(contentsOfFile: authTokenFile, encoding: .utf8) else {
            throw ValidationError("cannot read --auth-token-file \(authTokenFile)")
        }
        let token = String(text.prefix { $0 != "\n" && $0 != "\r" })
        guard !token.isEmpty else { throw ValidationError("--auth-token-file \(authTokenFile) has an empty first line") }
        return token
    }

    func run() async throws {
        var logger = Logger(label: "sync-server", factory: ServerLogHandler.init)
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        var configuration = ServerConfiguration(
            host: host, port: port, database: try parsedDatabase(), pageSize: pageSize, maxTop: maxTop, softDelete: softDelete,
            authentication: try await authentication(), perUserTables: try parsedPerUserTables(),
            logger: logger)
        configuration.maxBatchOperations = maxBatchOperations
        configuration.storageTimeout = .milliseconds(storageTimeout)
        configuration.maxAttachmentBytes = maxAttachmentBytes
        if let metricsPort {
            configuration.metrics = ServerMetrics()
            configuration.metricsPort = metricsPort
        }
        #if canImport(Glibc)
        let descriptors = DescriptorLimit.raise()
        logger.debug("Open file descriptors allowed", metadata: ["limit": "\(descriptors.map(String.init) ?? "unknown")"])
        #endif
        let host = self.host
        let (app, storage) = try await buildApplication(configuration) { port in
            // Exactly one line on stdout, for scripts and tests to read.
            FileHandle.standardOutput.write(Data("listening on http://\(host):\(port)\n".utf8))
        }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: app),
            .init(service: ShutdownNotice(logger: logger), successTerminationBehavior: .ignore),
        ]
        if let metrics = configuration.metrics {
            let metricsLogger = logger
            let metricsApp = buildMetricsApplication(metrics, host: host, port: configuration.metricsPort, logger: logger) { port in
                metricsLogger.info("Serving metrics", metadata: ["url": "http://\(host):\(port)/metrics"])
            }
            services.append(.init(service: metricsApp))
        }
        // On SIGTERM or SIGINT the server stops accepting connections, finishes the requests in
        // flight (each connection closes after its response), then closes the storage.
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        try await storage.close()
    }
}

/// The database password: the first line of `--database-password-file`, else `PGPASSWORD`,
/// which is removed from the environment once read (so no child process or later reader sees
/// it). Read once: `validate()` and `run()` get the same value.
enum DatabasePassword {
    private static let environment = Mutex<String??>(nil)

    static func read(file: String?) throws -> String? {
        if let file {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw ValidationError("cannot read --database-password-file \(file)")
            }
            let password = String(text.prefix { $0 != "\n" && $0 != "\r" })
            guard !password.isEmpty else { throw ValidationError("--database-password-file \(file) has an empty first line") }
            return password
        }
        return environment.withLock { cached in
            if let cached { return cached }
            let value = ProcessInfo.processInfo.environment["PGPASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
            unsetenv("PGPASSWORD")
            cached = .some(value)
            return value
        }
    }
}

/// Logs, when a graceful shutdown begins, that the requests in flight are being finished.
struct ShutdownNotice: Service {
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        logger.info("Stopping: finishing the requests in flight")
    }
}
