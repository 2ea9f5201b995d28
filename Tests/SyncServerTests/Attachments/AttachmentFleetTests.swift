import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// A fleet of devices on one server (an SQLite file) or two instances (PostgreSQL), through the
/// real server on 127.0.0.1: 200 users, each with an item and two attachments, upload in two
/// pieces and download them, 50 devices at a time, other users' transfers running meanwhile. Every content reads back
/// intact (its SHA-256 is the row's), and each user's attachments are theirs alone: another user's
/// id is answered exactly as a missing one.
@Suite struct AttachmentFleetTests {
    static let users = 200
    static let perUser = 2
    /// The devices transferring at any moment.
    static let window = 50

    /// The content of `user`'s attachment `index`: 1–8 KiB, different for every pair.
    static func content(_ user: Int, _ index: Int) -> [UInt8] {
        AttachmentFixture.content(1024 + (user * 7919 + index * 104_729) % (7 * 1024), seed: user * 10 + index + 1)
    }

    /// The id of `user`'s attachment `index`: one id every user has, and one of the user's own.
    static func id(_ user: Int, _ index: Int) -> String {
        index == perUser - 1 ? "own\(user)" : "f\(index)"
    }

    @Test(arguments: [StorageFactory.sqliteFile, .postgres])
    func everyUserTransfersTheirOwnContentIntactAmongAFleet(_ factory: StorageFactory) async throws {
        var configuration = ServerConfiguration.testing(authentication: .verifier(TestIdentityVerifier()), perUserTables: .all)
        configuration.maxAttachmentBytes = 64 << 10
        try await Deployment.run(factory, instances: 2, configuration: configuration) { deployment in
            let client = deployment.client
            let missing = try await client.send(
                .get, deployment.server(0), "/tables/notes__attachments/nothing/content", headers: [(WireHeader.auth, "user0")])
            #expect(missing.status == .notFound)
            let verified = try await withThrowingTaskGroup(of: Int.self) { group in
                var total = 0
                for user in 0..<Self.users {
                    // A window of devices at once; each one that ends lets the next start.
                    if user >= Self.window, let count = try await group.next() { total += count }
                    group.addTask { try await Self.device(user, deployment, missing: missing) }
                }
                for try await count in group { total += count }
                return total
            }
            #expect(verified == Self.users * Self.perUser, "every content read back intact")
        }
    }

    /// What a reply said: its status, its upload offset and its error body.
    static func describe(_ reply: Reply) -> String {
        "\(reply.status.code) offset \(reply.uploadOffset.map(String.init) ?? "none") \(String(decoding: reply.body.prefix(512), as: UTF8.self))"
    }

    /// One user's device: its item, its rows, two-piece uploads, downloads checked by SHA-256,
    /// and a look at the next user's attachments; returns the contents verified.
    static func device(_ user: Int, _ deployment: Deployment, missing: Reply) async throws -> Int {
        let client = deployment.client
        let auth = [(WireHeader.auth, "user\(user)")]
        let writer = deployment.server(user), reader = deployment.server(user + 1)
        let note = try await client.send(.post, writer, "/tables/notes", object: ["id": "note"], headers: auth)
        try #require(note.status == .created, "user\(user)'s item: \(Self.describe(note))")
        for index in 0..<perUser {
            let bytes = content(user, index)
            let row = try AttachmentFixture.row(id(user, index), item: "note", content: bytes)
            let inserted = try await client.send(.post, writer, "/tables/notes__attachments", object: row, headers: auth)
            try #require(inserted.status == .created, "user\(user)'s attachment row \(index): \(Self.describe(inserted))")
            let half = bytes.count / 2
            let path = "/tables/notes__attachments/\(id(user, index))/content"
            let first = try await client.send(
                .patch, writer, path, bytes: Array(bytes[..<half]), headers: AttachmentFixture.uploadPairs(offset: 0, user: "user\(user)"))
            try #require(first.status == .noContent && first.uploadOffset == Int64(half), "first piece: \(Self.describe(first))")
            let rest = try await client.send(
                .patch, reader, path, bytes: Array(bytes[half...]),
                headers: AttachmentFixture.uploadPairs(offset: Int64(half), user: "user\(user)"))
            try #require(rest.status == .noContent && rest.uploadOffset == Int64(bytes.count), "second piece: \(Self.describe(rest))")
        }
        var verified = 0
        for index in 0..<perUser {
            let reply = try await client.send(.get, reader, "/tables/notes__attachments/\(id(user, index))/content", headers: auth)
            let digest = try AttachmentFixture.digest(Array(reply.body))
            if reply.status == .ok, reply.eTag == "\"\(digest)\"", digest == (try AttachmentFixture.digest(content(user, index))) {
                verified += 1
            }
        }
        // Another user's attachment, and one of an id this user has too, from the other user's side.
        let other = [(WireHeader.auth, "user\((user + 1) % users)")]
        let foreign = try await client.send(.get, writer, "/tables/notes__attachments/\(id(user, perUser - 1))/content", headers: other)
        #expect(foreign.status == missing.status && foreign.body == missing.body, "another user's attachment is a missing one")
        let outsider = try await client.send(.get, reader, "/tables/notes__attachments/f0/content", headers: [(WireHeader.auth, "nobody\(user)")])
        #expect(outsider.status == missing.status && outsider.body == missing.body, "a user without rows reaches no content")
        return verified
    }
}
