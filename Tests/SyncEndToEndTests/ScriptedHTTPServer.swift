#if os(Linux)
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// An HTTP/1.1 server on 127.0.0.1 and a port of its choosing that answers every request as its
/// ``Script`` says and reports each request it read and each connection that closed, so that a
/// test can wait for those moments instead of sleeping.
final class ScriptedHTTPServer: Sendable {
    /// How the server answers.
    enum Script: Sendable {
        /// Reads the request and never answers.
        case holdBeforeHead
        /// Sends the head (chunked) and the first piece, then holds the response open.
        case holdAfterFirstPiece
        /// Sends the head and the first piece, then closes the connection mid-response.
        case closeAfterFirstPiece
        /// Sends the head, both pieces and the end of the response.
        case complete
        /// Never reads from the connection (a request's body fills the socket's buffers).
        case stallReading
        /// Answers a connection's first request whole and keeps the connection open; closes it
        /// on reading its second request, unanswered (a kept-alive connection closed by the
        /// server just as the client reuses it).
        case closeOnSecondRequest
        /// Answers a connection's first request whole and keeps the connection open; reads the
        /// later ones and never answers them.
        case holdSecondRequest
    }

    /// The first piece of every answered body.
    static let firstPiece = "retry: 1000\n\n"
    /// The second piece of a complete body.
    static let secondPiece = "event: change\ndata: {\"table\":\"todo\"}\n\n"

    let port: Int
    /// The head of every request read, in order.
    let requests: AsyncStream<HTTPRequestHead>
    /// The body of every request read, in order (empty when it had none).
    let bodies: AsyncStream<Data>
    /// One element per connection accepted.
    let acceptedConnections: AsyncStream<Void>
    /// One element per connection that closed (whichever side closed it).
    let closedConnections: AsyncStream<Void>
    /// How many connections were accepted so far.
    var acceptedCount: Int { counter.count }
    private let counter: AcceptCounter
    private let listener: any Channel
    private let stalled: StalledChannels

    /// Starts a server answering by `script`.
    static func start(_ script: Script) async throws -> ScriptedHTTPServer {
        let (requests, request) = AsyncStream<HTTPRequestHead>.makeStream()
        let (bodies, body) = AsyncStream<Data>.makeStream()
        let (acceptedConnections, accepted) = AsyncStream<Void>.makeStream()
        let (closedConnections, closed) = AsyncStream<Void>.makeStream()
        let stalled = StalledChannels()
        let counter = AcceptCounter()
        let events = ScriptedHandler.Events(
            request: request, body: body, accepted: accepted, closed: closed, stalled: stalled, counter: counter)
        var bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        if case .stallReading = script {
            // A small fixed receive buffer: a client's body stalls after a few kilobytes more
            // than its own send buffer.
            bootstrap = bootstrap.childChannelOption(ChannelOptions.socketOption(.so_rcvbuf), value: 65_536)
        }
        let listener =
            try await bootstrap
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(ScriptedHandler(script: script, events: events))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = listener.localAddress?.port else { throw ChannelError.unknownLocalAddress }
        return ScriptedHTTPServer(
            port: port, requests: requests, bodies: bodies, acceptedConnections: acceptedConnections,
            closedConnections: closedConnections, listener: listener, stalled: stalled, counter: counter)
    }

    private init(
        port: Int, requests: AsyncStream<HTTPRequestHead>, bodies: AsyncStream<Data>, acceptedConnections: AsyncStream<Void>,
        closedConnections: AsyncStream<Void>, listener: any Channel, stalled: StalledChannels, counter: AcceptCounter
    ) {
        self.stalled = stalled
        self.counter = counter
        self.port = port
        self.requests = requests
        self.bodies = bodies
        self.acceptedConnections = acceptedConnections
        self.closedConnections = closedConnections
        self.listener = listener
    }

    /// The URL of `path` (and query) on this server.
    func url(_ path: String, scheme: String = "http") -> URL {
        URL(string: "\(scheme)://127.0.0.1:\(port)\(path)")!
    }

    /// Closes every connection that has stalled so far (a stalled connection reads nothing, so
    /// it does not see its client's end by itself).
    func closeStalledConnections() {
        for channel in stalled.take() { channel.close(promise: nil) }
    }

    /// Stops listening (connections still open stay open).
    func stop() async throws {
        try await listener.close()
    }
}

/// Answers one connection's request by the server's script.
private final class ScriptedHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Where the handler reports what it read and saw.
    struct Events: Sendable {
        let request: AsyncStream<HTTPRequestHead>.Continuation
        let body: AsyncStream<Data>.Continuation
        let accepted: AsyncStream<Void>.Continuation
        let closed: AsyncStream<Void>.Continuation
        let stalled: StalledChannels
        let counter: AcceptCounter
    }

    let script: ScriptedHTTPServer.Script
    let events: Events
    private var body = Data()
    /// How many requests this connection has read.
    private var requestsRead = 0

    init(script: ScriptedHTTPServer.Script, events: Events) {
        self.script = script
        self.events = events
    }

    func channelActive(context: ChannelHandlerContext) {
        // Before the channel's first read, which follows channelActive.
        if case .stallReading = script {
            try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
            events.stalled.add(context.channel)
        }
        events.counter.increment()
        events.accepted.yield()
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            events.request.yield(head)
        case .body(let buffer):
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            events.body.yield(body)
            body = Data()
            requestsRead += 1
            answer(context)
        }
    }

    private func answer(_ context: ChannelHandlerContext) {
        switch script {
        case .holdBeforeHead, .stallReading: return
        case .holdAfterFirstPiece, .closeAfterFirstPiece, .complete: break
        case .closeOnSecondRequest, .holdSecondRequest:
            guard requestsRead == 1 else {
                if case .closeOnSecondRequest = script { context.close(promise: nil) }
                return
            }
        }
        let head = HTTPResponseHead(
            version: .http1_1, status: .ok, headers: ["Content-Type": "text/event-stream", "X-Script": "one", "x-script": "two"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: ScriptedHTTPServer.firstPiece)))), promise: nil)
        switch script {
        case .holdBeforeHead, .holdAfterFirstPiece, .stallReading:
            break
        case .closeAfterFirstPiece:
            context.close(promise: nil)
        case .complete, .closeOnSecondRequest, .holdSecondRequest:
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: ScriptedHTTPServer.secondPiece)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        events.closed.yield()
        context.fireChannelInactive()
    }
}

/// How many connections a ``ScriptedHTTPServer`` accepted.
final class AcceptCounter: Sendable {
    private let accepted = Mutex(0)

    var count: Int { accepted.withLock { $0 } }

    func increment() {
        accepted.withLock { $0 += 1 }
    }
}

/// The connections of a ``ScriptedHTTPServer/Script/stallReading`` server that do not read.
final class StalledChannels: Sendable {
    private let channels = Mutex<[any Channel]>([])

    func add(_ channel: any Channel) {
        channels.withLock { $0.append(channel) }
    }

    func take() -> [any Channel] {
        channels.withLock { channels in
            defer { channels = [] }
            return channels
        }
    }
}

/// The process's own sockets whose peer is a given port, found by asking each open descriptor
/// for its peer: the sockets a client left open towards a server. (The kernel's `/proc/net/tcp`
/// listing, read while other sockets come and go, can miss entries; the descriptors cannot.)
enum LoopbackSockets {
    /// How many of this process's open sockets are connected to `port` (as the client side).
    static func count(connectedTo port: Int) throws -> Int {
        var count = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            guard let descriptor = Int32(name), peerPort(of: descriptor) == port else { continue }
            count += 1
        }
        return count
    }

    /// The peer's port of a connected IPv4 or IPv6 socket; nil for anything else.
    private static func peerPort(of descriptor: Int32) -> Int? {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
        }
        guard result == 0 else { return nil }
        switch Int32(address.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        case AF_INET6:
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
        default:
            return nil
        }
    }
}
#endif
