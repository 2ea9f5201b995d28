import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import SyncWire

/// A real HTTP client (AsyncHTTPClient, its own connection pool) for tests that drive servers
/// listening on 127.0.0.1 with many requests in flight at once.
final class HTTPTestClient: Sendable {
    private let client: HTTPClient

    /// A client that opens up to `connections` connections per server.
    init(connections: Int = 32) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        // A request waits for a free connection as long as it may wait for its answer: with more
        // requests in flight than connections on two busy cores, 10 s (the default) is too short.
        configuration.timeout.connect = .seconds(60)
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Closes every connection; call once, before the client is dropped.
    func shutdown() async throws {
        try await client.shutdown()
    }

    /// Sends a request with the API version header to `base` + `uri`, with `object` as its JSON
    /// body or `bytes` as its body.
    func send(
        _ method: HTTPRequest.Method, _ base: URL, _ uri: String, object: JSONObject? = nil, bytes: [UInt8]? = nil,
        headers: [(String, String)] = []
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: base.absoluteString + uri)
        request.method = HTTPMethod(rawValue: method.rawValue)
        request.headers.add(name: WireHeader.apiVersion, value: WireHeader.apiVersionValue)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let object {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONCoding.encode(object)))
        }
        if let bytes { request.body = .bytes(ByteBuffer(bytes: bytes)) }
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 64 << 20)
        var fields = HTTPFields()
        for (name, value) in response.headers {
            if let field = HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
        }
        return Reply(status: HTTPResponse.Status(code: Int(response.status.code)), headers: fields, body: Data(body.readableBytesView))
    }
}
