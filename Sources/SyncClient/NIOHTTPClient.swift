#if os(Linux)
import Foundation
import FoundationNetworking
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SyncEventLoop

/// The requests of ``HTTPSyncTransport`` on Linux: HTTP/1.1 over SwiftNIO, on event loops of the
/// client's own (``loops``).
///
/// A whole request (``send(_:)``) goes over a kept-alive connection of this client's pool (see
/// ``HTTPConnectionPool``) when one to the same scheme, host and port is idle, and over a new one
/// otherwise; the connection goes back to the pool once its response was read to its end and
/// neither side asked to close it. A streamed request (``open(_:)``) has a connection of its own
/// (`Connection: close`).
///
/// FoundationNetworking's `URLSessionTask.cancel()` races the task's own completion and can stop
/// the process or deadlock; requests are cancelled at any moment (live sync's `stop()`, a
/// consumer that goes away, a cancelled pull or push), so on Linux none goes through URLSession.
/// Cancelling here only closes a channel: whatever the moment, the connection is closed once,
/// never goes back to the pool, and everything waiting on it ends.
final class NIOHTTPClient: Sendable {
    /// The idle kept-alive connections of whole requests.
    let pool: HTTPConnectionPool

    /// The event loops of every connection, one per core, for the life of the process. A push
    /// runs on the loop of its connection (``executor(for:)``): the engine's work between
    /// requests, and the writes of a store without an executor of its own, which block the loop.
    /// They are the client's own, so that no other SwiftNIO work of the app (its servers,
    /// AsyncHTTPClient, database drivers, all on `MultiThreadedEventLoopGroup.singleton` by
    /// default) waits behind a push.
    static let loops = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)

    /// Creates a client with an empty pool.
    /// - Parameters:
    ///   - maximumIdle: how many idle connections the pool keeps per scheme, host and port.
    ///   - idleTimeout: how long an idle connection is kept before it is closed: shorter than
    ///     common servers' keep-alive timeouts, so that the client is the one to close.
    init(maximumIdle: Int = 8, idleTimeout: TimeAmount = .seconds(4)) {
        pool = HTTPConnectionPool(maximumIdle: maximumIdle, idleTimeout: idleTimeout)
    }

    /// Sends `request` over a connection of its own and returns once the response's head has
    /// arrived.
    /// - Parameters:
    ///   - request: the request: its method, URL, headers and body.
    ///   - timeout: the longest wait between two reads, in seconds.
    /// - Returns: the status, the headers and the body as it arrives.
    /// - Throws: a `URLError` when no answer arrived, `CancellationError` when the calling task
    ///   was cancelled first.
    static func open(_ request: SyncRequest, timeout: TimeInterval) async throws -> SyncStreamResponse {
        try Task.checkCancellation()
        let target = try RequestTarget(request, timeout: timeout, keepAlive: false)
        return try await exchange(target, on: nil, pool: nil) { $0.start(.stream($1)) }
    }

    /// Sends `request` and returns the whole response once it has ended and its connection is
    /// back in the pool or closed.
    ///
    /// A kept-alive connection may be found closed by the server just as the request is written.
    /// The request is then sent once more, on a new connection, only when nothing of the response
    /// had arrived and either the request had not been written or it is a GET or a HEAD: a
    /// request that changes something is never sent twice.
    /// - Parameters:
    ///   - request: the request.
    ///   - timeout: the longest wait between two reads, in seconds.
    /// - Returns: the status, the headers and the body.
    /// - Throws: a `URLError` when no complete answer arrived, `CancellationError` when the
    ///   calling task was cancelled first.
    func send(_ request: SyncRequest, timeout: TimeInterval) async throws -> SyncResponse {
        try Task.checkCancellation()
        let target = try RequestTarget(request, timeout: timeout, keepAlive: true)
        if let idle = pool.take(target.key) {
            do {
                return try await Self.exchange(target, on: idle, pool: pool) { $0.start(.whole($1)) }
            } catch is HTTPExchange.StaleConnection {
                // The server had closed the idle connection: once more on a new one.
            }
        }
        return try await Self.exchange(target, on: nil, pool: pool) { $0.start(.whole($1)) }
    }

    /// The executor for a run of requests to `url`'s server: the event loop of an idle
    /// connection to it, or the loop a new connection made from the run would use.
    /// - Parameter url: a URL of the server.
    /// - Returns: the executor, or nil when `url` is not one this client sends to.
    func executor(for url: URL) -> (any TaskExecutor)? {
        guard let target = try? RequestTarget(SyncRequest(method: .get, url: url), timeout: 0, keepAlive: true) else { return nil }
        return EventLoopExecutor(pool.loop(target.key) ?? Self.loops.any())
    }

    /// Closes the idle connections of the pool and returns once they are closed.
    func closeIdleConnections() async {
        for channel in pool.takeAll() { try? await channel.close() }
    }

    /// Runs one exchange: sends over `idle`, or connects and sends, and waits for what `start`
    /// asks the exchange to hand back.
    private static func exchange<Answer: Sendable>(
        _ target: RequestTarget, on idle: IdleConnection?, pool: HTTPConnectionPool?,
        start: (HTTPExchange, CheckedContinuation<Answer, any Error>) -> Void
    ) async throws -> Answer {
        // A connection taken from the pool goes back to it when the caller is already cancelled
        // (the exchange is closing before it begins); only a new one is not made at all.
        if idle == nil { try Task.checkCancellation() }
        let exchange = HTTPExchange(reused: idle != nil, repeatable: target.isRepeatable)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { answer in
                start(exchange, answer)
                if let idle {
                    idle.begin(exchange, target: target, pool: pool)
                } else {
                    connect(target, exchange: exchange, pool: pool)
                }
            }
        } onCancel: {
            exchange.close(because: CancellationError())
        }
    }

    private static func connect(_ target: RequestTarget, exchange: HTTPExchange, pool: HTTPConnectionPool?) {
        // On the caller's loop when it runs on one (a push preferring ``executor(for:)``).
        let bootstrap = ClientBootstrap(group: loops.any())
            .connectTimeout(target.timeout)
            .channelInitializer { channel in
                guard exchange.attach(channel) else { return channel.eventLoop.makeFailedFuture(CancellationError()) }
                do {
                    let pipeline = channel.pipeline.syncOperations
                    if target.secure {
                        let context = try tlsContext.get()
                        try pipeline.addHandler(NIOSSLClientHandler(context: context, serverHostname: target.serverName))
                    }
                    try pipeline.addHTTPClientHandlers()
                    try pipeline.addHandler(HTTPConnectionHandler(exchange: exchange, target: target, pool: pool))
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
        bootstrap.connect(host: target.host, port: target.port).whenFailure { error in
            exchange.connectFailed(error)
        }
    }

    /// The client TLS context (system trust roots), made once per process.
    private static let tlsContext = Result { try NIOSSLContext(configuration: .makeClientConfiguration()) }
}

/// Where and what a request sends, read once from its ``SyncRequest``: the one place the
/// request's head is built, for streamed and whole requests alike. The head is made straight
/// from the request's headers (no `URLRequest` in between); NIO's outbound header validation
/// checks them once, as the head is written.
struct RequestTarget: Sendable {
    var host: String
    var port: Int
    var secure: Bool
    var head: HTTPRequestHead
    var body: Data?
    var timeout: TimeAmount

    /// The name the TLS handshake sends (SNI): the host, unless it is an IP address.
    var serverName: String? {
        (try? SocketAddress(ipAddress: host, port: port)) == nil ? host : nil
    }

    /// The pool's key of the connections this request may use.
    var key: HTTPConnectionPool.Key {
        HTTPConnectionPool.Key(secure: secure, host: host, port: port)
    }

    /// Whether sending the request twice does what sending it once does, as far as the client
    /// may assume (GET and HEAD).
    var isRepeatable: Bool {
        head.method == .GET || head.method == .HEAD
    }

    /// Reads `request`.
    /// - Parameters:
    ///   - request: the request.
    ///   - timeout: the longest wait between two reads, in seconds (60 when it is not a
    ///     positive number; at most a day).
    ///   - keepAlive: whether the connection may stay open after the response (HTTP/1.1's
    ///     default); otherwise the request says `Connection: close`.
    /// - Throws: `URLError(.unsupportedURL)` for a URL that is not absolute `http` or `https`
    ///   with a host.
    init(_ request: SyncRequest, timeout: TimeInterval, keepAlive: Bool) throws {
        let url = request.url.absoluteURL
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host(percentEncoded: false), !host.isEmpty
        else { throw URLError(.unsupportedURL) }
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        secure = scheme == "https"
        let defaultPort = secure ? 443 : 80
        port = url.port ?? defaultPort

        var headers = HTTPHeaders()
        headers.reserveCapacity(request.headers.count + 3)
        for (name, value) in request.headers { headers.replaceOrAdd(name: name, value: value) }
        let hostName = self.host.utf8.contains(UInt8(ascii: ":")) ? "[\(self.host)]" : self.host
        headers.replaceOrAdd(name: "Host", value: port == defaultPort ? hostName : "\(hostName):\(port)")
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        body = request.body
        if let body { headers.replaceOrAdd(name: "Content-Length", value: String(body.count)) }

        let path = url.path(percentEncoded: true)
        let target = path.isEmpty ? "/" : path
        let uri = url.query(percentEncoded: true).map { target + "?" + $0 } ?? target
        head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method.rawValue), uri: uri, headers: headers)

        let seconds = timeout.isFinite && timeout > 0 ? min(timeout, 86_400) : 60
        self.timeout = .nanoseconds(Int64(seconds * 1_000_000_000))
    }
}
#endif
