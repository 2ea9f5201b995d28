import AsyncHTTPClient
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import SyncSQL
import SyncServer
import SyncWire
import Testing

/// `GET /changes`: change notifications as server-sent events, scoped and authenticated like a
/// read, carrying no item content.
@Suite(.timeLimit(.minutes(2))) struct ChangeStreamTests {
    /// One open change stream, read block by block (an event or a comment).
    struct Stream {
        let status: Int
        let contentType: String?
        private var body: HTTPClientResponse.Body.AsyncIterator
        private var buffer = ""

        static func open(
            _ client: HTTPClient, _ base: URL, tables: String = "todo", headers: [(String, String)] = []
        ) async throws -> Stream {
            var request = HTTPClientRequest(url: base.absoluteString + "/changes?tables=" + tables)
            request.headers.add(name: WireHeader.apiVersion, value: WireHeader.apiVersionValue)
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            let response = try await client.execute(request, timeout: .seconds(60))
            return Stream(
                status: Int(response.status.code), contentType: response.headers.first(name: "Content-Type"),
                body: response.body.makeAsyncIterator())
        }

        private init(status: Int, contentType: String?, body: HTTPClientResponse.Body.AsyncIterator) {
            self.status = status
            self.contentType = contentType
            self.body = body
        }

        /// The next block (lines before a blank line), or `nil` when the stream ended.
        mutating func nextBlock() async throws -> String? {
            while true {
                if let end = buffer.range(of: "\n\n") {
                    let block = String(buffer[..<end.lowerBound])
                    buffer.removeSubrange(..<end.upperBound)
                    return block
                }
                guard let chunk = try await body.next() else { return nil }
                buffer += String(buffer: chunk)
            }
        }

        /// The next `change` event's id and data, skipping comments and the retry line.
        mutating func nextEvent() async throws -> (id: String, data: JSONObject)? {
            while let block = try await nextBlock() {
                var id: String?
                var data: JSONObject?
                for line in block.split(separator: "\n") {
                    if line.hasPrefix("id: ") { id = String(line.dropFirst(4)) }
                    if line.hasPrefix("data: ") { data = try JSONCoding.decode(JSONObject.self, from: Data(line.dropFirst(6).utf8)) }
                }
                if let id, let data { return (id, data) }
            }
            return nil
        }
    }

    static func withServer(
        _ configuration: ServerConfiguration = .testing(), _ body: (RunningServer, any TableStorage, HTTPClient, HTTPTestClient) async throws -> Void
    ) async throws {
        var configuration = configuration
        configuration.changeStream = ChangeStreamSettings(pollInterval: .milliseconds(20), keepAliveInterval: .milliseconds(100))
        let storage = try await SQLiteTableStorage.open(.memory, logger: .quiet)
        let server = try await RunningServer.start(configuration, storage: storage)
        let streaming = HTTPClient(eventLoopGroupProvider: .singleton)
        let client = HTTPTestClient()
        var failure: (any Error)?
        do { try await body(server, storage, streaming, client) } catch { failure = error }
        try? await streaming.shutdown()
        try? await client.shutdown()
        await server.stop()
        if let failure { throw failure }
    }

    @Test func aWriteIsAnnouncedWithItsUpdatedAtAndNothingOfTheItem() async throws {
        try await Self.withServer { server, _, streaming, client in
            var stream = try await Stream.open(streaming, server.url)
            #expect(stream.status == 200)
            #expect(stream.contentType?.hasPrefix("text/event-stream") == true)
            let first = try #require(try await stream.nextEvent())
            #expect(first.data == ["table": "todo", "updatedAt": nil])
            #expect(first.id == "todo|")

            let stored = try await client.send(.post, server.url, "/tables/todo", object: ["id": "secret-id", "text": "secret text"])
            #expect(stored.status == .created)
            let event = try #require(try await stream.nextEvent())
            #expect(event.data == ["table": "todo", "updatedAt": stored.object["updatedAt"] ?? .null])
            #expect(!event.id.contains("secret") && !"\(event.data)".contains("secret"))

            // A delete is a change too (soft: a new updatedAt).
            let deleted = try await client.send(.delete, server.url, "/tables/todo/secret-id")
            #expect(deleted.status == .ok)
            let afterDelete = try #require(try await stream.nextEvent())
            #expect(afterDelete.data["updatedAt"] == deleted.object["updatedAt"])
        }
    }

    @Test func aWriteThatBypassesThisInstanceIsFoundByPollingTheStorage() async throws {
        try await Self.withServer { server, storage, streaming, _ in
            var stream = try await Stream.open(streaming, server.url, tables: "todo,other")
            var initial: Set<String> = []
            for _ in 0..<2 { initial.insert(try #require(try await stream.nextEvent()).data["table"]?.stringValue ?? "") }
            #expect(initial == ["todo", "other"])
            // As another instance over the same database would: straight into the storage.
            _ = try await storage.ensureColumns("other", scope: .shared, ["text": .text])
            guard case .written(let row) = try await storage.insert(table: "other", scope: .shared, item: ["id": "x", "text": "t"]) else {
                Issue.record("not written")
                return
            }
            let event = try #require(try await stream.nextEvent())
            #expect(event.data == ["table": "other", "updatedAt": row["updatedAt"] ?? .null])
        }
    }

    @Test func lastEventIDReportsWhatWasMissedAndOnlyThat() async throws {
        try await Self.withServer { server, _, streaming, client in
            _ = try await client.send(.post, server.url, "/tables/todo", object: ["id": "one"])
            var first = try await Stream.open(streaming, server.url)
            let seen = try #require(try await first.nextEvent())

            // Missed while away: announced at once on reconnecting with the last id.
            let missed = try await client.send(.post, server.url, "/tables/todo", object: ["id": "two"])
            var again = try await Stream.open(streaming, server.url, headers: [("Last-Event-ID", seen.id)])
            let caughtUp = try #require(try await again.nextEvent())
            #expect(caughtUp.data["updatedAt"] == missed.object["updatedAt"])

            // Nothing missed: the first event is the next write.
            var current = try await Stream.open(streaming, server.url, headers: [("Last-Event-ID", caughtUp.id)])
            let next = try await client.send(.post, server.url, "/tables/todo", object: ["id": "three"])
            let event = try #require(try await current.nextEvent())
            #expect(event.data["updatedAt"] == next.object["updatedAt"])
        }
    }

    @Test func aPerUserTablesEventsSpeakOfTheUsersOwnRowsOnly() async throws {
        let configuration = ServerConfiguration.testing(authentication: .verifier(TestIdentityVerifier()), perUserTables: .named(["notes"]))
        try await Self.withServer(configuration) { server, _, streaming, client in
            var alice = try await Stream.open(streaming, server.url, tables: "notes", headers: [(WireHeader.auth, "alice")])
            var bob = try await Stream.open(streaming, server.url, tables: "notes", headers: [(WireHeader.auth, "bob")])
            #expect(try await alice.nextEvent()?.id == "notes|")
            #expect(try await bob.nextEvent()?.id == "notes|")

            let alicesNote = try await client.send(
                .post, server.url, "/tables/notes", object: ["id": "a", "text": "x"], headers: [(WireHeader.auth, "alice")])
            let alicesEvent = try #require(try await alice.nextEvent())
            #expect(alicesEvent.data["updatedAt"] == alicesNote.object["updatedAt"], "\(alicesEvent) \(alicesNote.status) \(alicesNote.object)")
            let bobsNote = try await client.send(
                .post, server.url, "/tables/notes", object: ["id": "b", "text": "y"], headers: [(WireHeader.auth, "bob")])
            // Bob's next event is his own write: Alice's was never announced to him.
            let bobsEvent = try #require(try await bob.nextEvent())
            #expect(bobsEvent.data["updatedAt"] == bobsNote.object["updatedAt"])
            #expect(bobsEvent.id == "notes|" + (bobsNote.object["updatedAt"]?.stringValue ?? "-"))

            let anonymous = try await client.send(.get, server.url, "/changes?tables=notes")
            #expect(anonymous.status == .unauthorized)
        }
    }

    @Test func badRequestsAre400WithAMessageAndTheItemRouteIsUntouched() async throws {
        try await Self.withServer { server, _, streaming, client in
            for uri in [
                "/changes", "/changes?tables=", "/changes?tables=to-do", "/changes?tables=a,,b",
                "/changes?tables=" + (0...64).map { "t\($0)" }.joined(separator: ","),
            ] {
                let reply = try await client.send(.get, server.url, uri)
                #expect(reply.status == .badRequest, "\(uri)")
                #expect(reply.errorMessage != nil, "\(uri)")
            }
            for id in [
                "nonsense", "todo|2026-01-01T00:00:00.000Z|x", "todo|2026-01-01T00:00:00.000Z|1|2", "todo|yesterday", "todo|yesterday|1",
                "to do|", "to do||0",
            ] {
                let reply = try await client.send(.get, server.url, "/changes?tables=todo", headers: [("Last-Event-ID", id)])
                #expect(reply.status == .badRequest && reply.errorMessage != nil, "\(id)")
            }
            // `changes` is still an item id of the tables routes.
            _ = try await client.send(.post, server.url, "/tables/todo", object: ["id": "changes", "text": "an item"])
            let item = try await client.send(.get, server.url, "/tables/todo/changes")
            #expect(item.status == .ok && item.object["text"] == "an item")
            // An id of an earlier server (`table|updatedAt|rows`) is read, its row count ignored.
            var legacy = try await Stream.open(streaming, server.url, headers: [("Last-Event-ID", "todo|2026-01-01T00:00:00.000Z|1")])
            #expect(try await legacy.nextEvent()?.data["updatedAt"] == item.object["updatedAt"])
        }
    }

    @Test func aSilentStreamSendsKeepAlivesAndAShutdownEndsIt() async throws {
        var configuration = ServerConfiguration.testing()
        configuration.changeStream = ChangeStreamSettings(pollInterval: .milliseconds(20), keepAliveInterval: .milliseconds(50))
        let server = try await RunningServer.start(configuration, storage: try await SQLiteTableStorage.open(.memory, logger: .quiet))
        let streaming = HTTPClient(eventLoopGroupProvider: .singleton)
        var stream = try await Stream.open(streaming, server.url)
        var blocks: [String] = []
        while let block = try await stream.nextBlock() {
            blocks.append(block)
            if block == ": keep-alive" { break }
        }
        #expect(blocks.first == "retry: 1000")
        #expect(blocks.last == ": keep-alive")
        // Stopping returns although the stream was open, and the stream ends.
        await server.stop()
        while try await stream.nextBlock() != nil {}
        try await streaming.shutdown()
    }
}
