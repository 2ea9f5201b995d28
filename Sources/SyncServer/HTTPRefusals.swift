import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import SyncWire

/// Answers a request no route takes with a JSON message: 405 with `Allow` (the methods its path
/// takes) when another method of the path has a route, else 404.
///
/// Added to the router after every route, so it wraps only the router's not-found answer.
struct UnroutedRequestMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    /// Each route's path and method.
    let routes: [(path: RouterPath, method: HTTPRequest.Method)]

    init(routes: [Router<ServerRequestContext>.RouteDescription]) {
        self.routes = routes.map { ($0.path, $0.method) }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = allowedMethods(request.uri.path)
            guard !allowed.isEmpty else { throw TableError(.notFound, "There is no such resource") }
            var headers = HTTPFields()
            headers[.allow] = allowed.joined(separator: ", ")
            let message = "The method \(request.method.rawValue.prefix(32)) is not allowed here; allowed: \(allowed.joined(separator: ", "))"
            return try JSONResponse.make(["error": JSONValue.string(message)] as JSONObject, status: .methodNotAllowed, headers: headers)
        }
    }

    /// The methods of the routes whose path matches `path`, sorted.
    func allowedMethods(_ path: String) -> [String] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        let methods = routes.filter { route in
            route.path.components.count == segments.count && zip(route.path.components, segments).allSatisfy { $0 ~= $1 }
        }.map(\.method.rawValue)
        return Set(methods).sorted()
    }
}

/// Answers a request the HTTP decoder refuses — header fields beyond its limits, Hummingbird's
/// defaults of 80 KiB and 1000 fields (431), or text that is not HTTP/1.1 (400) — with a JSON
/// message like every other error, then closes the connection. Without it the server's HTTP
/// layer answers an empty 400.
///
/// One per connection, after the decoder. It answers only when no response is under way on
/// the connection (otherwise the error goes on, and the connection closes as before).
final class DecoderRefusalHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Requests whose head arrived and whose response has not ended.
    private var inFlight = 0

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { inFlight += 1 }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { inFlight = max(0, inFlight - 1) }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parse = error as? HTTPParserError, inFlight == 0 else {
            context.fireErrorCaught(error)
            return
        }
        let (status, message): (HTTPResponse.Status, String) =
            parse == .headerOverflow
            ? (.requestHeaderFieldsTooLarge, "The request's header fields exceed what the server takes (80 KiB, 1000 fields)")
            : (.badRequest, "The request is not valid HTTP/1.1")
        let body = ByteBuffer(bytes: (try? JSONWriter.data(["error": .string(message)] as JSONObject)) ?? Data())
        var head = HTTPResponse(status: status)
        head.headerFields[.contentType] = "application/json; charset=utf-8"
        head.headerFields[.cacheControl] = "no-cache"
        head.headerFields[.connection] = "close"
        head.headerFields[.contentLength] = String(body.readableBytes)
        inFlight = 1
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        // Output closes after the answer; input is read (and dropped) until the client closes, so
        // the answer is not lost to a reset, for a few seconds at most.
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            channel.close(mode: .output, promise: nil)
            channel.eventLoop.scheduleTask(in: .seconds(5)) { channel.close(promise: nil) }
        }
    }
}
