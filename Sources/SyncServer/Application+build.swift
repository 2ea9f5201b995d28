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
    let router = buildRouter(storage: storage, configuration: configuration)
    let app = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "ciphersync-sync-server"),
        onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
        logger: configuration.logger)
    return (app, storage)
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
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let (app, storage) = try await buildApplication(configuration) { port in continuation.yield(port) }
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: configuration.logger))
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), let url = URL(string: "http://\(configuration.host):\(port)") else {
            task.cancel()
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
