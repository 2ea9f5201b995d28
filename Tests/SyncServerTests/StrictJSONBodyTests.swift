import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SyncServer
import SyncWire
import Testing

/// Request bodies are RFC 8259 JSON: anything else is a 400 whose message says why (a reason and a
/// byte offset, never the body's text), and nothing is written.
@Suite struct StrictJSONBodyTests {
    /// A body that is not JSON, the phrase its 400 message must contain, and the offset it must name.
    struct Case: Sendable, CustomStringConvertible {
        let name: String
        let body: [UInt8]
        let reason: String
        let offset: Int
        var description: String { name }

        init(_ name: String, _ text: String, reason: String, at offset: Int) {
            self.init(name, Array(text.utf8), reason: reason, at: offset)
        }

        init(_ name: String, _ body: [UInt8], reason: String, at offset: Int) {
            self.name = name
            self.body = body
            self.reason = reason
            self.offset = offset
        }
    }

    /// A marker every body carries, so a test can check that no message echoes the input.
    static let marker = "q7marker"

    static let cases: [Case] = [
        Case("trailing comma in an object", #"{"id": "x", "text": "q7marker",}"#, reason: "trailing comma", at: 30),
        Case("trailing comma in an array", #"{"id": "x", "text": "q7marker", "tags": [1, 2,]}"#, reason: "trailing comma", at: 45),
        Case("block comment", #"{"id": "x", /* q7marker */ "text": "y"}"#, reason: "comment", at: 12),
        Case("line comment", "// q7marker\n{\"id\": \"x\"}", reason: "comment", at: 0),
        Case("single-quoted name", #"{'id': 'x', "text": "q7marker"}"#, reason: "single quotes", at: 1),
        Case("single-quoted value", #"{"id": 'x', "text": "q7marker"}"#, reason: "single quotes", at: 7),
        Case("NaN", #"{"id": "x", "text": "q7marker", "n": NaN}"#, reason: "NaN and Infinity", at: 37),
        Case("Infinity", #"{"id": "x", "text": "q7marker", "n": Infinity}"#, reason: "NaN and Infinity", at: 37),
        Case("-Infinity", #"{"id": "x", "text": "q7marker", "n": -Infinity}"#, reason: "NaN and Infinity", at: 37),
        Case("invalid UTF-8 byte", Array(#"{"id": "x", "text": "q7marker"#.utf8) + [0xFF] + Array(#""}"#.utf8), reason: "UTF-8", at: 29),
        Case("overlong UTF-8", Array(#"{"id": "x", "text": "q7marker"#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8), reason: "UTF-8", at: 29),
        Case(
            "UTF-8 encoded surrogate", Array(#"{"id": "x", "text": "q7marker"#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8), reason: "UTF-8",
            at: 29),
        Case("duplicate key", #"{"id": "x", "text": "q7marker", "text": "y"}"#, reason: "duplicate", at: 32),
        Case("duplicate id", #"{"id": "x", "text": "q7marker", "id": "y"}"#, reason: "duplicate", at: 32),
        Case(
            "nesting beyond the limit",
            #"{"id": "x", "text": "q7marker", "n": "# + String(repeating: "[", count: JSONParser.maximumDepth)
                + String(repeating: "]", count: JSONParser.maximumDepth) + "}",
            reason: "nested", at: 37 + JSONParser.maximumDepth - 1),
        Case("lone high surrogate", #"{"id": "x", "text": "q7marker\ud800"}"#, reason: "surrogate", at: 29),
        Case("lone low surrogate", #"{"id": "x", "text": "q7marker\udc00"}"#, reason: "surrogate", at: 29),
        Case("high surrogate before a letter", #"{"id": "x", "text": "q7marker\ud800\u0041"}"#, reason: "surrogate", at: 29),
    ]

    @Test(arguments: [HTTPRequest.Method.post, .patch], cases)
    func aBodyThatIsNotJSONIsRefusedAndWritesNothing(_ method: HTTPRequest.Method, _ bad: Case) async throws {
        try await TestServer.run(.testing()) { server in
            // A PATCH goes to the row the body names; a POST would create that row.
            let existing = method == .patch ? "x" : "keep"
            try await server.send(.post, "/tables/victims", object: ["id": .string(existing), "text": "kept", "n": 1])
            let before = try await server.send(.get, "/tables/victims?__includeDeleted=true").body

            let reply = try await server.send(method, method == .patch ? "/tables/victims/x" : "/tables/victims", bytes: bad.body)
            #expect(reply.status == .badRequest)
            let message = reply.errorMessage ?? ""
            #expect(message.contains(bad.reason), "\(message)")
            #expect(message.contains("at byte \(bad.offset)"), "\(message)")
            #expect(!String(decoding: reply.body, as: UTF8.self).contains(Self.marker), "the response does not echo the body")

            #expect(try await server.send(.get, "/tables/victims?__includeDeleted=true").body == before, "the table is unchanged")
        }
    }

    /// The deepest body the limit allows is accepted and stored as it was sent.
    @Test func nestingUpToTheLimitIsAccepted() async throws {
        try await TestServer.run(.testing()) { server in
            let depth = JSONParser.maximumDepth - 1  // the item itself is the outermost level
            let nested = String(repeating: "[", count: depth) + "7" + String(repeating: "]", count: depth)
            let created = try await server.send(.post, "/tables/victims", json: #"{"id": "deep", "n": "# + nested + "}")
            #expect(created.status == .created)
            var expected: JSONValue = 7
            for _ in 0..<depth { expected = [expected] }
            #expect(try await server.send(.get, "/tables/victims/deep").object["n"] == expected)
        }
    }
}

extension TestServer {
    /// Sends raw bytes as the body, with the API version header.
    func send(_ method: HTTPRequest.Method, _ uri: String, bytes: [UInt8]) async throws -> Reply {
        try await client.execute(uri: uri, method: method, headers: TestServer.version, body: ByteBuffer(bytes: bytes)) { response in
            Reply(status: response.status, headers: response.headers, body: Data(response.body.readableBytesView))
        }
    }
}
