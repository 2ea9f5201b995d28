#if os(Linux)
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

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
    }

    /// The first piece of every answered body.
    static let firstPiece = "retry: 1000\n\n"
    /// The second piece of a complete body.
    static let secondPiece = "event: change\ndata: {\"table\":\"todo\"}\n\n"

    let port: Int
    /// The head of every request read, in order.
    let requests: AsyncStream<HTTPRequestHead>
    /// One element per connection that closed (whichever side closed it).
    let closedConnections: AsyncStream<Void>
    private let listener: any Channel

    /// Starts a server answering by `script`.
    static func start(_ script: Script) async throws -> ScriptedHTTPServer {
        let (requests, request) = AsyncStream<HTTPRequestHead>.makeStream()
        let (closedConnections, closed) = AsyncStream<Void>.makeStream()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(
                        ScriptedHandler(script: script, request: request, closed: closed))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = listener.localAddress?.port else { throw ChannelError.unknownLocalAddress }
        return ScriptedHTTPServer(port: port, requests: requests, closedConnections: closedConnections, listener: listener)
    }

    private init(port: Int, requests: AsyncStream<HTTPRequestHead>, closedConnections: AsyncStream<Void>, listener: any Channel) {
        self.port = port
        self.requests = requests
        self.closedConnections = closedConnections
        self.listener = listener
    }

    /// The URL of `path` (and query) on this server.
    func url(_ path: String, scheme: String = "http") -> URL {
        URL(string: "\(scheme)://127.0.0.1:\(port)\(path)")!
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

    let script: ScriptedHTTPServer.Script
    let request: AsyncStream<HTTPRequestHead>.Continuation
    let closed: AsyncStream<Void>.Continuation

    init(script: ScriptedHTTPServer.Script, request: AsyncStream<HTTPRequestHead>.Continuation, closed: AsyncStream<Void>.Continuation) {
        self.script = script
        self.request = request
        self.closed = closed
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): request.yield(head)
        case .body: break
        case .end: answer(context)
        }
    }

    private func answer(_ context: ChannelHandlerContext) {
        if case .holdBeforeHead = script { return }
        let head = HTTPResponseHead(
            version: .http1_1, status: .ok, headers: ["Content-Type": "text/event-stream", "X-Script": "one", "x-script": "two"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: ScriptedHTTPServer.firstPiece)))), promise: nil)
        switch script {
        case .holdBeforeHead, .holdAfterFirstPiece:
            break
        case .closeAfterFirstPiece:
            context.close(promise: nil)
        case .complete:
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: ScriptedHTTPServer.secondPiece)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed.yield()
        context.fireChannelInactive()
    }
}

/// The process's own TCP sockets whose peer is a loopback port, read from `/proc`: the sockets
/// a client left open towards a server.
enum LoopbackSockets {
    /// How many of this process's open sockets are connected to `port` (as the client side).
    static func count(connectedTo port: Int) throws -> Int {
        var inodes = Set<Substring>()
        for fd in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd),
                link.hasPrefix("socket:[")
            else { continue }
            inodes.insert(link.dropFirst("socket:[".count).dropLast())
        }
        let peer = String(format: "%04X", port)
        var count = 0
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            let text = try String(contentsOfFile: table, encoding: .utf8)
            for line in text.split(separator: "\n").dropFirst() {
                // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, fields[2].hasSuffix(":" + peer), inodes.contains(fields[9]) else { continue }
                count += 1
            }
        }
        return count
    }
}
#endif
