public import Foundation
public import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import SyncWire

/// Builds the router: `GET /health`, `GET /openapi.json` (the API's OpenAPI document, which
/// describes every route added here), the tables routes over `storage`, and `GET /changes` (their
/// change notifications, see ``ChangeStreamSettings``). A method no route of a path takes is a
/// 405 with `Allow`, a path no route takes a 404, both with a JSON message.
///
/// - Parameters:
///   - storage: Where the tables are.
///   - configuration: Paging, limits, soft delete, authentication, per-user tables.
/// - Returns: The router.
public func buildRouter(storage: any TableStorage, configuration: ServerConfiguration) -> Router<ServerRequestContext> {
    let router = Router(context: ServerRequestContext.self)
    if let metrics = configuration.metrics { router.add(middleware: RequestMetricsMiddleware(metrics: metrics)) }
    router.add(middleware: LogRequestsMiddleware(.debug))
    let changes = ChangeHub(storage: storage, settings: configuration.changeStream)
    configuration.metrics?.countStreams { changes.openStreams }
    router.add(middleware: ChangeNotifyingMiddleware(hub: changes))
    router.get("health") { _, context in try await health(storage, logger: context.logger) }
    router.get("openapi.json") { _, _ in OpenAPIDocument.response() }
    var service = TableService(storage: storage, softDelete: configuration.softDelete)
    service.maxAttachmentBytes = configuration.maxAttachmentBytes
    TableController(service: service, configuration: configuration).addRoutes(to: router)
    if let content = attachmentContent(of: storage) {
        AttachmentController(
            tables: TableController(service: service, configuration: configuration),
            uploads: AttachmentUploads(store: content, running: RunningUploads())
        ).addRoutes(to: router)
    }
    ChangesController(hub: changes, configuration: configuration).addRoutes(to: router)
    // Last: it wraps only the answer to a request no route takes (405 or 404, in JSON).
    router.add(middleware: UnroutedRequestMiddleware(routes: router.routes))
    return router
}

/// `GET /health`: 200 `{"status":"ok"}` when the storage answers, else 503 with a JSON message
/// (for load balancers; no API version or authentication needed).
private func health(_ storage: any TableStorage, logger: Logger) async throws -> Response {
    do {
        try await storage.ping()
        return try JSONResponse.make(["status": JSONValue.string("ok")] as JSONObject)
    } catch {
        logger.warning("Health check: the storage does not answer", metadata: ["error": "\(error)"])
        return try JSONResponse.make(["error": JSONValue.string("The storage does not answer")] as JSONObject, status: .serviceUnavailable)
    }
}

/// Opens the storage the configuration names.
///
/// - Parameter configuration: The server's configuration.
/// - Returns: The open storage.
/// - Throws: The engine's error, or ``TableStorageError`` for a database it cannot serve.
public func openStorage(_ configuration: ServerConfiguration) async throws -> any TableStorage {
    switch configuration.database {
    case .memory, .sqlite:
        return try await SQLiteTableStorage.open(configuration.database, logger: configuration.logger, lockWait: configuration.storageTimeout)
    case .postgres(var settings):
        settings.connectionWait = configuration.storageTimeout
        return try await PostgresTableStorage.open(settings, logger: configuration.logger)
    }
}

/// Checks that every existing table is stored as the kind the configuration serves it as (a
/// per-user table served as shared would show every user's rows; a shared one served per user
/// has rows without owners); an attachment companion table is served as its table.
///
/// - Parameters:
///   - storage: The storage.
///   - configuration: Which tables are per-user.
/// - Throws: ``TableStorageError/scopeMismatch(table:)`` naming the first table that is not.
public func checkTables(_ storage: any TableStorage, _ configuration: ServerConfiguration) async throws {
    for schema in try await storage.tables().sorted(by: { $0.name < $1.name })
    where schema.name != OwnerColumns.table
        && schema.isPerUser != configuration.perUserTables.contains(TableName.attachmentOwner(of: schema.name) ?? schema.name)
    {
        throw TableStorageError.scopeMismatch(table: schema.name)
    }
}

/// Builds the application: storage opened from the configuration, router, listening address.
/// `onListening` receives the port once the server accepts connections.
///
/// - Returns: The application and its storage (the caller closes it after the application ran).
/// - Throws: What ``openStorage(_:)`` and ``checkTables(_:_:)`` throw.
public func buildApplication(
    _ configuration: ServerConfiguration, onListening: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> (some ApplicationProtocol, any TableStorage) {
    let storage = try await openStorage(configuration)
    do {
        return (try await buildApplication(configuration, storage: storage, onListening: onListening), storage)
    } catch {
        try? await storage.close()
        throw error
    }
}

/// Builds the application over `storage` (the configuration's database is not used).
///
/// - Throws: What ``checkTables(_:_:)`` throws.
public func buildApplication(
    _ configuration: ServerConfiguration, storage: any TableStorage, onListening: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    try await checkTables(storage, configuration)
    return Application(
        router: buildRouter(storage: storage, configuration: configuration),
        server: .http1(configuration: .init(additionalChannelHandlers: [DecoderRefusalHandler()])),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "ciphersync-sync-server"),
        onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
        logger: configuration.logger)
}

/// A server started in this process (by a demo, a test or an app), stopped with ``stop()``.
public final class RunningServer: Sendable {
    /// The base URL, e.g. `http://127.0.0.1:51234`.
    public let url: URL
    /// The base URL of the metrics listener (``ServerConfiguration/metrics``), `nil` without
    /// metrics: `GET` its `/metrics`.
    public let metricsURL: URL?
    private let group: ServiceGroup
    private let task: Task<Void, any Error>
    private let storage: any TableStorage

    init(url: URL, metricsURL: URL?, group: ServiceGroup, task: Task<Void, any Error>, storage: any TableStorage) {
        self.url = url
        self.metricsURL = metricsURL
        self.group = group
        self.task = task
        self.storage = storage
    }

    /// Starts a server with `configuration` (use port 0 for a free port) and returns once it
    /// accepts connections.
    ///
    /// - Throws: What ``openStorage(_:)`` throws, or why the server could not listen.
    public static func start(_ configuration: ServerConfiguration) async throws -> RunningServer {
        try await start(configuration, storage: try await openStorage(configuration))
    }

    /// Starts a server over `storage` (another engine, or a test's) and returns once it accepts
    /// connections. The server owns the storage: ``stop()`` closes it, and so does a failed start.
    ///
    /// - Throws: What ``checkTables(_:_:)`` throws, or why the server could not listen.
    public static func start(_ configuration: ServerConfiguration, storage: any TableStorage) async throws -> RunningServer {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        var services: [any Service]
        do {
            services = [try await buildApplication(configuration, storage: storage) { port in continuation.yield(port) }]
        } catch {
            try? await storage.close()
            throw error
        }
        let (metricsPorts, metricsContinuation) = AsyncStream<Int>.makeStream()
        if let metrics = configuration.metrics {
            services.append(
                buildMetricsApplication(metrics, host: configuration.host, port: configuration.metricsPort, logger: configuration.logger) {
                    metricsContinuation.yield($0)
                })
        } else {
            metricsContinuation.finish()
        }
        let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [], logger: configuration.logger))
        let task = Task {
            // A server that fails to start (a port in use, say) ends the stream, so start() returns.
            defer {
                continuation.finish()
                metricsContinuation.finish()
            }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        var metricsIterator = metricsPorts.makeAsyncIterator()
        let metricsPort = await metricsIterator.next()
        guard let port = await iterator.next(), let url = URL(string: "http://\(configuration.host):\(port)"),
            configuration.metrics == nil || metricsPort != nil
        else {
            await group.triggerGracefulShutdown()
            let failure = await task.result
            try? await storage.close()
            if case .failure(let error) = failure { throw error }
            throw TableError(.internalServerError, "The server did not start")
        }
        continuation.finish()
        metricsContinuation.finish()
        let metricsURL = metricsPort.flatMap { URL(string: "http://\(configuration.host):\($0)") }
        return RunningServer(url: url, metricsURL: metricsURL, group: group, task: task, storage: storage)
    }

    /// Stops accepting requests, finishes the ones in flight, closes the storage.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        try? await storage.close()
    }
}
