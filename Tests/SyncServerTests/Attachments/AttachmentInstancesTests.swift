import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// Attachment content in PostgreSQL: two server instances over one database serve one content,
/// whichever instance received which part of it.
@Suite struct AttachmentInstancesTests {
    @Test func twoInstancesShareTheContent() async throws {
        try await Deployment.run(.postgres, instances: 2, configuration: .testing()) { deployment in
            #expect(deployment.servers.count == 2)
            let (one, two, client) = (deployment.server(0), deployment.server(1), deployment.client)
            let bytes = AttachmentFixture.content(700_000, seed: 9)
            try #require(try await client.send(.post, one, "/tables/photos", object: ["id": "p1"]).status == .created)
            try #require(
                try await client.send(.post, one, "/tables/photos__attachments", object: try AttachmentFixture.row("a1", item: "p1", content: bytes))
                    .status == .created)
            let path = "/tables/photos__attachments/a1/content"
            let first = try await client.send(.patch, one, path, bytes: Array(bytes[0..<300_000]), headers: AttachmentFixture.uploadPairs(offset: 0))
            #expect(first.status == .noContent && first.uploadOffset == 300_000)
            #expect(try await client.send(.head, two, path).uploadOffset == 300_000, "the other instance sees the partial content")
            let stale = try await client.send(.patch, one, path, bytes: Array(bytes[0..<10]), headers: AttachmentFixture.uploadPairs(offset: 0))
            #expect(stale.status == .conflict && stale.uploadOffset == 300_000)
            let rest = try await client.send(
                .patch, two, path, bytes: Array(bytes[300_000...]), headers: AttachmentFixture.uploadPairs(offset: 300_000))
            #expect(rest.status == .noContent && rest.uploadOffset == 700_000)
            for server in [one, two] {
                let whole = try await client.send(.get, server, path)
                #expect(whole.status == .ok && whole.body == Data(bytes))
                let range = try await client.send(.get, server, path, headers: [("Range", "bytes=299990-300009")])
                #expect(range.status == .partialContent && range.body == Data(bytes[299_990...300_009]))
            }
            try #require(try await client.send(.delete, two, "/tables/photos/p1").status == .ok)
            #expect(try await client.send(.get, one, path).status == .notFound, "deleted with its item, on every instance")
        }
    }
}
