import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// The content routes: offsets, refusals that change nothing, the digest check, whole and ranged
/// reads with the SHA-256 as `ETag`, and content that goes with its row.
@Suite struct AttachmentContentTests {
    /// Larger than the chunk the server keeps in memory (256 KiB), so that it goes in pieces.
    static let content = AttachmentFixture.content(600_000, seed: 7)

    /// An item `p1` of `photos` and its attachment `a1` for `bytes`.
    static func seed(_ server: TestServer, _ bytes: [UInt8] = content, id: String = "a1") async throws {
        if try await server.send(.get, "/tables/photos/p1").status != .ok {
            try #require(try await server.send(.post, "/tables/photos", object: ["id": "p1"]).status == .created)
        }
        try #require(
            try await server.send(.post, "/tables/photos__attachments", object: try AttachmentFixture.row(id, item: "p1", content: bytes)).status
                == .created)
    }

    @Test(arguments: StorageFactory.all)
    func anUploadInPiecesReadsBackWholeAndByRange(_ factory: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: factory) { server in
            try await Self.seed(server)
            let empty = try await server.progress("photos", "a1")
            #expect(empty.status == .ok && empty.uploadOffset == 0 && empty.uploadLength == 600_000 && empty.eTag == nil)
            #expect(try await server.download("photos", "a1").status == .notFound, "incomplete content is not served")

            let first = try await server.upload("photos", "a1", Array(Self.content[0..<250_000]), at: 0)
            #expect(first.status == .noContent && first.uploadOffset == 250_000)
            let wrong = try await server.upload("photos", "a1", Array(Self.content[0..<10]), at: 0)
            #expect(wrong.status == .conflict && wrong.uploadOffset == 250_000 && wrong.errorMessage != nil)
            let ahead = try await server.upload("photos", "a1", Array(Self.content[300_000..<300_010]), at: 300_000)
            #expect(ahead.status == .conflict && ahead.uploadOffset == 250_000)
            let rest = try await server.upload("photos", "a1", Array(Self.content[250_000...]), at: 250_000)
            #expect(rest.status == .noContent && rest.uploadOffset == 600_000)

            let digest = try AttachmentFixture.digest(Self.content)
            let done = try await server.progress("photos", "a1")
            #expect(done.uploadOffset == 600_000 && done.eTag == "\"\(digest)\"")
            let whole = try await server.download("photos", "a1")
            #expect(whole.status == .ok && whole.body == Data(Self.content))
            #expect(whole.eTag == "\"\(digest)\"" && whole.headers[.contentType] == "image/jpeg")
            let middle = try await server.download("photos", "a1", range: "bytes=100-199")
            #expect(middle.status == .partialContent && middle.body == Data(Self.content[100...199]))
            #expect(middle.headers[.contentRange] == "bytes 100-199/600000" && middle.eTag == "\"\(digest)\"")
            let tail = try await server.download("photos", "a1", range: "bytes=599990-")
            #expect(tail.status == .partialContent && tail.body == Data(Self.content[599_990...]))
            let across = try await server.download("photos", "a1", range: "bytes=262000-700000")
            #expect(across.status == .partialContent && across.body == Data(Self.content[262_000...]))
            let beyond = try await server.download("photos", "a1", range: "bytes=600000-")
            #expect(beyond.status == .rangeNotSatisfiable && beyond.headers[.contentRange] == "bytes */600000")
            #expect(try await server.upload("photos", "a1", [], at: 600_000).status == .conflict, "complete content takes no more")
        }
    }

    @Test(arguments: StorageFactory.all)
    func aBodyBeyondTheSizeIs413AndChangesNothing(_ factory: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: factory) { server in
            let small = AttachmentFixture.content(1000)
            try await Self.seed(server, small)
            try #require(try await server.upload("photos", "a1", Array(small[0..<400]), at: 0).status == .noContent)
            let over = try await server.upload("photos", "a1", AttachmentFixture.content(601), at: 400)
            #expect(over.status == .contentTooLarge && over.errorMessage != nil)
            #expect(try await server.progress("photos", "a1").uploadOffset == 400)
            let rest = try await server.upload("photos", "a1", Array(small[400...]), at: 400)
            #expect(rest.status == .noContent && rest.uploadOffset == 1000)
            #expect(try await server.download("photos", "a1").body == Data(small))
        }
    }

    @Test(arguments: StorageFactory.all)
    func anotherDigestIs422AndTheUploadStartsAgain(_ factory: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: factory) { server in
            try await Self.seed(server)
            var forged = Self.content
            forged[500_000] ^= 1
            try #require(try await server.upload("photos", "a1", Array(forged[0..<300_000]), at: 0).status == .noContent)
            let mismatch = try await server.upload("photos", "a1", Array(forged[300_000...]), at: 300_000)
            #expect(mismatch.status == .unprocessableContent && mismatch.uploadOffset == 0 && mismatch.errorMessage != nil)
            #expect(try await server.progress("photos", "a1").uploadOffset == 0)
            #expect(try await server.download("photos", "a1").status == .notFound)
            let right = try await server.upload("photos", "a1", Self.content, at: 0)
            #expect(right.status == .noContent && right.uploadOffset == 600_000)
            #expect(try await server.download("photos", "a1").body == Data(Self.content))
        }
    }

    @Test(arguments: StorageFactory.all)
    func deletingTheRowOrItsItemRemovesTheContent(_ factory: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: factory) { server in
            let small = AttachmentFixture.content(5000)
            try await Self.seed(server, small, id: "a1")
            try await Self.seed(server, small, id: "a2")
            for id in ["a1", "a2"] { try #require(try await server.upload("photos", id, small, at: 0).status == .noContent) }
            try #require(try await server.send(.delete, "/tables/photos__attachments/a1").status == .ok)
            #expect(try await server.download("photos", "a1").status == .notFound)
            #expect(try await server.progress("photos", "a1").status == .notFound)
            try #require(try await server.send(.post, "/tables/photos__attachments/a1", json: "").status == .created)
            #expect(try await server.progress("photos", "a1").uploadOffset == 0, "the content went with the row")

            try #require(try await server.send(.delete, "/tables/photos/p1").status == .ok)
            #expect(try await server.download("photos", "a2").status == .notFound)
            try #require(try await server.send(.post, "/tables/photos__attachments/a2", json: "").status == .created)
            #expect(try await server.progress("photos", "a2").uploadOffset == 0, "the content went with the item")
        }
    }

    @Test func badRequestsAreRefusedAndChangeNothing() async throws {
        try await TestServer.run(.testing()) { server in
            try await Self.seed(server, AttachmentFixture.content(10))
            var json = TestServer.version
            json[.contentType] = "application/json"
            if let name = HTTPField.Name(WireHeader.uploadOffset) { json[name] = "0" }
            #expect(
                try await server.send(.patch, "/tables/photos__attachments/a1/content", bytes: [1, 2], headers: json).status == .unsupportedMediaType)
            for offset in ["", "-1", "x", "1.5"] {
                var headers = AttachmentFixture.upload(TestServer.version, offset: 0)
                if let name = HTTPField.Name(WireHeader.uploadOffset) { headers[name] = offset }
                #expect(try await server.send(.patch, "/tables/photos__attachments/a1/content", bytes: [1], headers: headers).status == .badRequest)
            }
            #expect(try await server.upload("photos", "never", [1], at: 0).status == .notFound)
            #expect(try await server.send(.get, "/tables/photos/p1/content", bytes: nil, headers: TestServer.version).status == .notFound)
            #expect(try await server.progress("photos", "a1").uploadOffset == 0)
            let zero: [UInt8] = []
            try await Self.seed(server, zero, id: "empty")
            #expect(try await server.upload("photos", "empty", zero, at: 0).status == .noContent)
            let empty = try await server.download("photos", "empty")
            let digest = try AttachmentFixture.digest(zero)
            #expect(empty.status == .ok && empty.body.isEmpty && empty.eTag == "\"\(digest)\"")
        }
    }
}
