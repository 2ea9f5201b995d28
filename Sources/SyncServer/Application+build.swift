import Foundation
public import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// Builds the router: the tables routes over `storage`.
public func buildRouter(storage: any TableStorage, configuration: ServerConfiguration) -> Router<BasicRequestContext> {
    let router = Router()
    router.add(middleware: LogRequestsMiddleware(.debug))
    let service = TableService(storage: storage, clock: WriteClock(), softDelete: configuration.softDelete)
    TableController(service: service, configuration: configuration).addRoutes(to: router)
    return router
}

/// Builds the application: storage opened from the configuration, router, listening address.
/// `onListening` receives the port once the server accepts connections.
public func buildApplication(
    _ configuration: ServerConfiguration, onListening: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> (some ApplicationProtocol, any TableStorage) {
    let storage = try await SQLiteTableStorage.open(configuration.database, logger: configuration.logger)
    return (buildApplication(configuration, storage: storage, onListening: onListening), storage)
}

/// Builds the application over `storage` (the configuration's database is not used).
public func buildApplication(
    _ configuration: ServerConfiguration, storage: any TableStorage, onListening: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
    Application(
        router: buildRouter(storage: storage, configuration: configuration),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "ciphersync-sync-server"),
        onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
        logger: configuration.logger)
}

/// A server started in this process (by a demo, a test or an app), stopped with ``stop()``.
public final class RunningServer: Sendable {
    /// The base URL, e.g. `http://127.0.0.1:51234`.
    public let url: URL
    private let group: ServiceGroup
    private let task: Task<Void, any Error>
    private let storage: any TableStorage

    init(url: URL, group: ServiceGroup, task: Task<Void, any Error>, storage: any TableStorage) {
        self.url = url
        self.group = group
        self.task = task
        self.storage = storage
    }

    /// Starts a server with `configuration` (use port 0 for a free port) and returns once it
    /// accepts connections.
    public static func start(_ configuration: ServerConfiguration) async throws -> RunningServer {
        let storage = try await SQLiteTableStorage.open(configuration.database, logger: configuration.logger)
        return try await start(configuration, storage: storage)
    }

    /// Starts a server over `storage` (another engine, or a test's) and returns once it accepts
    /// connections. The server owns the storage: ``stop()`` closes it.
    public static func start(_ configuration: ServerConfiguration, storage: any TableStorage) async throws -> RunningServer {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = buildApplication(configuration, storage: storage) { port in continuation.yield(port) }
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: configuration.logger))
        let task = Task {
            // A server that fails to start (a port in use, say) ends the stream, so start() returns.
            defer { continuation.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), let url = URL(string: "http://\(configuration.host):\(port)") else {
            let failure = await task.result
            try? await storage.close()
            if case .failure(let error) = failure { throw error }
            throw TableError(.internalServerError, "The server did not start")
        }
        continuation.finish()
        return RunningServer(url: url, group: group, task: task, storage: storage)
    }

    /// Stops accepting requests, finishes the ones in flight, closes the storage.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        try? await storage.close()
    }
}
