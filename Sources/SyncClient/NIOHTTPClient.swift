#if os(Linux)
import Foundation
import FoundationNetworking
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The requests of ``HTTPSyncTransport`` on Linux: HTTP/1.1 over SwiftNIO, one connection per
/// request (`Connection: close`), on NIO's shared event loops.
///
/// FoundationNetworking's `URLSessionTask.cancel()` races the task's own completion and can stop
/// the process or deadlock; requests are cancelled at any moment (live sync's `stop()`, a
/// consumer that goes away, a cancelled pull or push), so on Linux none goes through URLSession.
/// Cancelling here only closes a channel: whatever the moment, the connection is closed once and
/// everything waiting on it ends.
enum NIOHTTPClient {
    /// Sends `request` and returns once the response's head has arrived.
    /// - Parameter request: the request as ``HTTPSyncTransport/urlRequest(for:)`` builds it: its
    ///   method, URL, headers and body; its timeout is the longest wait between two reads.
    /// - Returns: the status, the headers and the body as it arrives.
    /// - Throws: a `URLError` when no answer arrived, `CancellationError` when the calling task
    ///   was cancelled first.
    static func open(_ request: URLRequest) async throws -> SyncStreamResponse {
        try await exchange(request) { $0.start(.stream($1)) }
    }

    /// Sends `request` and returns the whole response once it has ended and its connection is
    /// closed.
    /// - Parameter request: the request as ``HTTPSyncTransport/urlRequest(for:)`` builds it.
    /// - Returns: the status, the headers and the body.
    /// - Throws: a `URLError` when no complete answer arrived, `CancellationError` when the
    ///   calling task was cancelled first.
    static func send(_ request: URLRequest) async throws -> SyncResponse {
        try await exchange(request) { $0.start(.whole($1)) }
    }

    /// Runs one exchange: connects, sends, and waits for what `start` asks the exchange to hand
    /// back.
    private static func exchange<Answer: Sendable>(
        _ request: URLRequest, start: (HTTPExchange, CheckedContinuation<Answer, any Error>) -> Void
    ) async throws -> Answer {
        try Task.checkCancellation()
        let target = try RequestTarget(request)
        let exchange = HTTPExchange()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { answer in
                start(exchange, answer)
                connect(target, exchange: exchange)
            }
        } onCancel: {
            exchange.close(because: CancellationError())
        }
    }

    private static func connect(_ target: RequestTarget, exchange: HTTPExchange) {
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
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
                    try pipeline.addHandler(IdleStateHandler(readTimeout: target.timeout))
                    try pipeline.addHandler(HTTPExchangeHandler(exchange: exchange, target: target))
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

/// Where and what a request sends, read from its `URLRequest`: the one place the request's head
/// is built, for streamed and whole requests alike.
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

    init(_ request: URLRequest) throws {
        guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty
        else { throw URLError(.unsupportedURL) }
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        secure = scheme == "https"
        let defaultPort = secure ? 443 : 80
        port = components.port ?? defaultPort

        var headers = HTTPHeaders()
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers.replaceOrAdd(name: name, value: value) }
        let hostName = self.host.contains(":") ? "[\(self.host)]" : self.host
        headers.replaceOrAdd(name: "Host", value: port == defaultPort ? hostName : "\(hostName):\(port)")
        headers.replaceOrAdd(name: "Connection", value: "close")
        body = request.httpBody
        if let body { headers.replaceOrAdd(name: "Content-Length", value: String(body.count)) }

        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        let uri = components.percentEncodedQuery.map { path + "?" + $0 } ?? path
        head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.httpMethod ?? "GET"), uri: uri, headers: headers)

        let seconds = request.timeoutInterval.isFinite && request.timeoutInterval > 0 ? min(request.timeoutInterval, 86_400) : 60
        timeout = .nanoseconds(Int64(seconds * 1_000_000_000))
    }
}
#endif
