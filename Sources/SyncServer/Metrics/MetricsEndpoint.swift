public import Hummingbird
public import Logging
import NIOCore

/// Records every request of the main router into a server's ``ServerMetrics``: its route
/// pattern, method, status and time, and the storage errors it met. The handlers and the storage
/// find the metrics in ``ServerMetrics/current`` while the request runs.
struct RequestMetricsMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let route = context.endpointPath ?? "unmatched"
        let method = request.method.rawValue
        do {
            let response = try await ServerMetrics.$current.withValue(metrics) { try await next(request, context) }
            metrics.answered(route: route, method: method, status: response.status.code, duration: started.duration(to: .now))
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            if let kind = Self.storageErrorKind(error) { metrics.storageFailed(kind) }
            metrics.answered(route: route, method: method, status: status.code, duration: started.duration(to: .now))
            throw error
        }
    }

    /// The kind a storage error is counted as, `nil` for an error that is the request's (a 4xx).
    static func storageErrorKind(_ error: any Error) -> String? {
        switch error {
        case let error as StorageUnavailableError: return error.reason.description
        case is StorageOutcomeUnknownError: return "outcome_unknown"
        case is any HTTPResponseError: return nil
        default: return "other"
        }
    }
}

/// Builds the application that serves `GET /metrics` (the Prometheus text format) on its own
/// listener, apart from the API's port (sync-server `--metrics-port`; docs/deploy.md, "Metrics").
/// Every other path is a 404.
///
/// - Parameters:
///   - metrics: The server's metrics.
///   - host: The address to listen on.
///   - port: The port; 0 picks a free one.
///   - logger: Where the listener logs.
///   - onListening: Receives the port once the listener accepts connections.
/// - Returns: The application.
public func buildMetricsApplication(
    _ metrics: ServerMetrics, host: String, port: Int, logger: Logger,
    onListening: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let router = Router()
    router.get("metrics") { _, _ in
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        headers[.cacheControl] = "no-cache"
        let bytes = metrics.exposition()
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
    return Application(
        router: router, configuration: .init(address: .hostname(host, port: port), serverName: "ciphersync-sync-server-metrics"),
        onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) }, logger: logger)
}
