#if os(Linux)
import Foundation
import FoundationNetworking
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// The streamed requests of ``HTTPSyncTransport`` on Linux: HTTP/1.1 over SwiftNIO, one
/// connection per request (`Connection: close`), on NIO's shared event loops.
///
/// FoundationNetworking's `URLSessionTask.cancel()` races the task's own completion and can stop
/// the process; a stream is cancelled at any moment (live sync's `stop()`, a consumer that goes
/// away), so on Linux it does not go through URLSession. Cancelling here only closes a channel:
/// whatever the moment, the connection is closed once and everything waiting on it ends.
enum NIOStreamClient {
    /// Sends `request` and returns once the response's head has arrived.
    /// - Parameter request: the request as ``HTTPSyncTransport/urlRequest(for:)`` builds it: its
    ///   method, URL, headers and body; its timeout is the longest wait between two reads.
    /// - Returns: the status, the headers and the body as it arrives.
    /// - Throws: a `URLError` when no answer arrived, `CancellationError` when the calling task
    ///   was cancelled first.
    static func open(_ request: URLRequest) async throws -> SyncStreamResponse {
        try Task.checkCancellation()
        let target = try StreamTarget(request)
        let exchange = StreamExchange()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { head in
                exchange.start(head: head)
                connect(target, exchange: exchange)
            }
        } onCancel: {
            exchange.close(because: CancellationError())
        }
    }

    private static func connect(_ target: StreamTarget, exchange: StreamExchange) {
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
                    try pipeline.addHandler(StreamExchangeHandler(exchange: exchange, target: target))
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

/// Where and what a streamed request sends, read from its `URLRequest`.
struct StreamTarget: Sendable {
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

/// One streamed exchange: what the caller waits for (the head), the body's stream, and the
/// channel, shared by the channel's handler, the caller's cancellation and the body's consumer.
///
/// Closing is one step whoever asks first: the channel is closed once (or refused when it is
/// attached later). The caller and the consumer hear of the end only when it has happened — when
/// the channel is inactive or the connection attempt failed — so nothing is left open behind a
/// thrown error.
final class StreamExchange: Sendable {
    private struct State {
        var head: CheckedContinuation<SyncStreamResponse, any Error>?
        var stream: AsyncThrowingStream<Data, any Error>?
        var channel: (any Channel)?
        /// Set by the first request to close; later channels are refused.
        var closing = false
        /// Why the exchange ends, when it ends by an error; the first reason wins.
        var reason: (any Error)?
    }

    private let state: Mutex<State>
    private let body: AsyncThrowingStream<Data, any Error>.Continuation

    init() {
        let (stream, body) = AsyncThrowingStream<Data, any Error>.makeStream()
        self.body = body
        state = Mutex(State(stream: stream))
        // The consumer ended or dropped the body, or its task was cancelled: should the end reach
        // it still (the termination handler runs before the stream ends), it is a cancellation.
        body.onTermination = { [weak self] _ in self?.close(because: CancellationError()) }
    }

    /// Records the caller's continuation, before anything can resume it.
    func start(head: CheckedContinuation<SyncStreamResponse, any Error>) {
        state.withLock { $0.head = head }
    }

    /// Keeps `channel` to close; false when the exchange is already closing.
    func attach(_ channel: any Channel) -> Bool {
        state.withLock { state in
            guard !state.closing else { return false }
            state.channel = channel
            return true
        }
    }

    /// Closes the connection (once, whoever asks): the consumer ended the body, the caller was
    /// cancelled, the response ended, or the channel met `reason`.
    func close(because reason: (any Error)?) {
        let channel = state.withLock { state -> (any Channel)? in
            if state.reason == nil { state.reason = reason }
            guard !state.closing else { return nil }
            state.closing = true
            return state.channel
        }
        channel?.close(promise: nil)
    }

    /// The response's head arrived: the caller gets it with the body's stream (unless the
    /// exchange is closing: then the caller hears why once the channel is closed).
    func received(status: Int, headers: [String: String]) {
        let (head, stream) = state.withLock { state -> (CheckedContinuation<SyncStreamResponse, any Error>?, AsyncThrowingStream<Data, any Error>?) in
            guard !state.closing else { return (nil, nil) }
            defer { (state.head, state.stream) = (nil, nil) }
            return (state.head, state.stream)
        }
        guard let head, let stream else { return }
        head.resume(returning: SyncStreamResponse(statusCode: status, headers: headers, body: stream))
    }

    /// A piece of the body arrived.
    func received(_ piece: Data) {
        body.yield(piece)
    }

    /// The response ended: the body finishes, the connection closes.
    func ended() {
        body.finish()
        close(because: nil)
    }

    /// The channel is closed: a caller still waiting, or a body not finished, ends with the
    /// reason (the connection was lost when there is none).
    func closed() {
        finish(URLError(.networkConnectionLost))
    }

    /// No connection was made.
    func connectFailed(_ error: any Error) {
        finish(NIOStreamClient.urlError(for: error))
    }

    private func finish(_ fallback: any Error) {
        // The stream leaves the lock with the rest: the last reference to it ends it, and its
        // termination handler takes the lock.
        let (head, _, reason) = state.withLock { state in
            state.closing = true
            state.channel = nil
            defer { (state.head, state.stream) = (nil, nil) }
            return (state.head, state.stream, state.reason ?? fallback)
        }
        head?.resume(throwing: reason)
        body.finish(throwing: reason)
    }
}

/// The channel's last handler: sends the request when connected and hands the response to its
/// exchange.
final class StreamExchangeHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let exchange: StreamExchange
    private let target: StreamTarget

    init(exchange: StreamExchange, target: StreamTarget) {
        self.exchange = exchange
        self.target = target
    }

    func channelActive(context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(target.head)), promise: nil)
        if let body = target.body {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            exchange.received(status: Int(head.status.code), headers: Self.headers(head.headers))
        case .body(let buffer):
            exchange.received(Data(buffer.readableBytesView))
        case .end:
            exchange.ended()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        exchange.closed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        exchange.close(because: NIOStreamClient.urlError(for: error))
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            exchange.close(because: URLError(.timedOut))
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// The response headers by name as the server spelled it; a repeated name's values joined
    /// with ", ", as URLSession joins them.
    static func headers(_ fields: HTTPHeaders) -> [String: String] {
        var headers: [String: String] = [:]
        var spelling: [String: String] = [:]
        for (name, value) in fields {
            let key = spelling[name.lowercased(), default: name]
            spelling[name.lowercased()] = key
            headers[key] = headers[key].map { $0 + ", " + value } ?? value
        }
        return headers
    }
}
#endif
