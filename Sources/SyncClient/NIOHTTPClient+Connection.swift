#if os(Linux)
import Foundation
import FoundationNetworking
import NIOCore
import NIOHTTP1

/// A connection's last handler: sends each request of the connection, hands its response to
/// its exchange, watches the time between two reads, and, once a whole response was read to
/// its end on a connection neither side asked to close, puts the connection back in its pool.
///
/// Between two requests (no exchange), anything the connection reads or meets closes it; its
/// end takes it out of the pool.
final class HTTPConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    /// The exchange under way; nil while the connection is idle.
    private var exchange: HTTPExchange?
    private var target: RequestTarget
    private weak var pool: HTTPConnectionPool?
    private var context: ChannelHandlerContext?
    /// Whether the response under way lets the connection stay open.
    private var keepAlive = false
    private var lastRead = NIODeadline.now()
    private var timer: Scheduled<Void>?

    /// Creates the handler of a new connection, for its first request.
    /// - Parameters:
    ///   - exchange: the first exchange.
    ///   - target: its request, sent once the connection is active.
    ///   - pool: where the connection goes after a whole response; nil for a connection of its
    ///     own.
    init(exchange: HTTPExchange, target: RequestTarget, pool: HTTPConnectionPool?) {
        self.exchange = exchange
        self.target = target
        self.pool = pool
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        send(context)
        context.fireChannelActive()
    }

    /// Sends `exchange`'s request over this idle connection; when the connection has closed in
    /// the meantime, the exchange ends as a connection lost before anything was written.
    func begin(_ exchange: HTTPExchange, target: RequestTarget, pool: HTTPConnectionPool?) {
        guard let context, context.channel.isActive else {
            exchange.closed()
            return
        }
        self.exchange = exchange
        self.target = target
        self.pool = pool
        keepAlive = false
        send(context)
    }

    private func send(_ context: ChannelHandlerContext) {
        guard let exchange else { return }
        context.write(wrapOutboundOut(.head(target.head)), promise: nil)
        if let body = target.body {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        }
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenSuccess { exchange.wrote() }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        lastRead = .now()
        watch(context, until: lastRead + target.timeout)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let exchange else {
            // An idle connection that speaks is not kept.
            context.close(promise: nil)
            return
        }
        lastRead = .now()
        switch unwrapInboundIn(data) {
        case .head(let head):
            keepAlive = head.isKeepAlive && target.head.isKeepAlive
            exchange.received(status: Int(head.status.code), headers: Self.headers(head.headers))
        case .body(let buffer):
            exchange.received(Data(buffer.readableBytesView))
        case .end:
            ended(context, exchange)
        }
    }

    /// The response was read to its end: the connection goes back to the pool when it may (the
    /// caller gets the response then), and is closed otherwise (the caller gets it once it is).
    private func ended(_ context: ChannelHandlerContext, _ exchange: HTTPExchange) {
        timer?.cancel()
        timer = nil
        guard keepAlive, let pool, let deliver = exchange.handOver() else {
            exchange.ended()
            return
        }
        self.exchange = nil
        let idle = IdleConnection(channel: context.channel, handler: NIOLoopBound(self, eventLoop: context.eventLoop))
        if pool.release(idle, key: target.key) {
            deliver()
        } else {
            context.channel.close().whenComplete { _ in deliver() }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if let exchange {
            exchange.closed()
        } else {
            pool?.remove(context.channel, key: target.key)
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let exchange {
            exchange.close(because: NIOHTTPClient.urlError(for: error))
        } else {
            context.close(promise: nil)
        }
    }

    /// Ends the exchange with a timeout once `target.timeout` passed since the last read.
    private func watch(_ context: ChannelHandlerContext, until deadline: NIODeadline) {
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) { handler.value.timeUp() }
    }

    private func timeUp() {
        timer = nil
        guard let exchange, let context else { return }
        let due = lastRead + target.timeout
        if due <= .now() {
            exchange.close(because: URLError(.timedOut))
        } else {
            watch(context, until: due)
        }
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
