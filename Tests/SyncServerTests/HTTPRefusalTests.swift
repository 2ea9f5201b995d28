import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// Requests no route takes: a method a known path does not take is a 405 naming the methods it
/// takes in `Allow`; a path nobody serves is a 404; both answer a JSON message.
@Suite struct UnroutedRequestTests {
    @Test func aMethodAKnownPathDoesNotTakeIs405WithAllowAndAJSONMessage() async throws {
        try await TestServer.run(.testing()) { server in
            let cases: [(HTTPRequest.Method, String, String)] = [
                (.trace, "/health", "GET"), (.head, "/health", "GET"), (.put, "/tables/todo", "GET, POST"),
                (.delete, "/tables/todo", "GET, POST"), (.put, "/tables/todo/1", "DELETE, GET, PATCH, POST"),
                (.options, "/openapi.json", "GET"), (.post, "/changes", "GET"), (.get, "/batch/todo", "POST"),
                (HTTPRequest.Method("PROPFIND") ?? .trace, "/capabilities", "GET"),
            ]
            for (method, path, allowed) in cases {
                let reply = try await server.send(method, path)
                #expect(reply.status == .methodNotAllowed, "\(method) \(path): \(reply.status)")
                #expect(reply.headers[.allow] == allowed, "\(method) \(path)")
                #expect(reply.headers[.contentType]?.hasPrefix("application/json") == true)
                #expect(reply.errorMessage?.contains(allowed) == true, "\(reply.errorMessage ?? "no JSON message")")
            }
            // The routes themselves answer as before.
            #expect(try await server.send(.get, "/health").status == .ok)
            #expect(try await server.send(.get, "/tables/todo").status == .notFound)
        }
    }

    @Test func aPathNobodyServesIs404WithAJSONMessage() async throws {
        try await TestServer.run(.testing()) { server in
            for (method, path) in [(HTTPRequest.Method.get, "/nothing"), (.trace, "/tables/todo/1/more"), (.get, "/")] {
                let reply = try await server.send(method, path)
                #expect(reply.status == .notFound && reply.headers[.allow] == nil, "\(method) \(path)")
                #expect(reply.errorMessage == "There is no such resource", "\(method) \(path)")
            }
        }
    }
}

/// Requests the HTTP decoder refuses are answered with a JSON message, like every other error.
@Suite struct DecoderRefusalTests {
    static func exchange(_ request: String) async throws -> String {
        let server = try await RunningServer.start(.testing())
        let response: String
        do {
            response = try await read(port: try #require(server.url.port), request)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        return response
    }

    /// The answer to `request` on a connection of its own, closed on return.
    static func read(port: Int, _ request: String) async throws -> String {
        let connection = try RawConnection(port: port)
        // The server may answer before the whole request is sent.
        try? await connection.send(Array(request.utf8))
        return try await connection.readToEnd()
    }

    static func body(_ response: String) -> JSONObject {
        guard let range = response.range(of: "\r\n\r\n") else { return [:] }
        return (try? JSONParser.parseObject(Data(response[range.upperBound...].utf8))) ?? [:]
    }

    @Test func aHeaderTooLargeIs431WithAJSONMessage() async throws {
        for header in ["X-Padding: \(String(repeating: "a", count: 100_000))\r\n", String(repeating: "X-Many: 1234567890\r\n", count: 5_000)] {
            let response = try await Self.exchange("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\(header)\r\n")
            #expect(response.hasPrefix("HTTP/1.1 431 "), "\(response.prefix(120))")
            #expect(response.lowercased().contains("content-type: application/json"))
            #expect(Self.body(response)["error"]?.stringValue?.contains("header fields exceed") == true, "\(response)")
        }
    }

    @Test func aRequestThatIsNotHTTPIs400WithAJSONMessage() async throws {
        let response = try await Self.exchange("GET /health HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n")
        #expect(response.hasPrefix("HTTP/1.1 400 "), "\(response.prefix(120))")
        #expect(Self.body(response)["error"] == "The request is not valid HTTP/1.1", "\(response)")
    }

    @Test func aRequestWithinTheLimitIsAnsweredAsBefore() async throws {
        let header = "X-Padding: \(String(repeating: "a", count: 60_000))\r\n"
        let response = try await Self.exchange("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\(header)\r\n")
        #expect(response.hasPrefix("HTTP/1.1 200 "), "\(response.prefix(120))")
    }
}
