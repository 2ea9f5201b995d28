import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// Attachments of per-user tables: each user reaches the content of their own rows only, and
/// another user's attachment is answered exactly as a missing one.
@Suite struct AttachmentIsolationTests {
    static let configuration = ServerConfiguration.testing(authentication: .verifier(TestIdentityVerifier()), perUserTables: .named(["notes"]))

    static func user(_ name: String) -> HTTPFields { TestIdentityVerifier.headers(name) }

    @Test(arguments: StorageFactory.all)
    func anotherUsersAttachmentIs404ExactlyLikeAMissingOne(_ factory: StorageFactory) async throws {
        try await TestServer.run(Self.configuration, storage: factory) { server in
            let alice = AttachmentFixture.content(3000, seed: 1)
            try #require(try await server.send(.post, "/tables/notes", object: ["id": "n1"], headers: Self.user("alice")).status == .created)
            let row = try AttachmentFixture.row("a1", item: "n1", content: alice)
            try #require(try await server.send(.post, "/tables/notes__attachments", object: row, headers: Self.user("alice")).status == .created)
            try #require(try await server.upload("notes", "a1", Array(alice[0..<1000]), at: 0, headers: Self.user("alice")).status == .noContent)

            let bob = Self.user("bob")
            let rowForBob = try await server.send(.post, "/tables/notes__attachments", object: row, headers: bob)
            #expect(rowForBob.status == .notFound && rowForBob.errorMessage == "item not found", "alice's item is not bob's")
            var answers: [String: [String]] = [:]
            for id in ["a1", "A1", "never"] {
                let replies = [
                    try await server.progress("notes", id, headers: bob), try await server.download("notes", id, headers: bob),
                    try await server.upload("notes", id, Array(alice[1000...]), at: 1000, headers: bob),
                    try await server.upload("notes", id, alice, at: 0, headers: bob),
                ]
                answers[id] = replies.map {
                    "\($0.status.code) \(String(decoding: $0.body, as: UTF8.self)) \($0.uploadOffset.map(String.init) ?? "-")"
                }
            }
            #expect(answers["never"]?.allSatisfy { $0.hasPrefix("404 ") } == true, "\(answers["never"] ?? [])")
            #expect(answers["a1"] == answers["never"] && answers["A1"] == answers["never"])
            #expect(try await server.progress("notes", "a1", headers: Self.user("alice")).uploadOffset == 1000, "bob's requests changed nothing")

            // Bob's own attachment of the same id is another attachment, with its own content.
            let own = AttachmentFixture.content(2000, seed: 2)
            try #require(try await server.send(.post, "/tables/notes", object: ["id": "n1"], headers: bob).status == .created)
            try #require(
                try await server.send(
                    .post, "/tables/notes__attachments", object: try AttachmentFixture.row("a1", item: "n1", content: own), headers: bob
                ).status == .created)
            #expect(try await server.progress("notes", "a1", headers: bob).uploadOffset == 0)
            #expect(try await server.upload("notes", "a1", own, at: 0, headers: bob).status == .noContent)
            #expect(try await server.upload("notes", "a1", Array(alice[1000...]), at: 1000, headers: Self.user("alice")).status == .noContent)
            #expect(try await server.download("notes", "a1", headers: bob).body == Data(own))
            #expect(try await server.download("notes", "a1", headers: Self.user("alice")).body == Data(alice))
        }
    }

    /// Hundreds of attachments of many users over one server on an SQLite file, uploaded at once:
    /// every user reads back exactly their own content under ids every user shares, and no other.
    @Test func manyUsersUploadAtOnceAndEachReadsOnlyTheirOwn() async throws {
        let (users, perUser) = (40, 8)
        var configuration = ServerConfiguration.testing(authentication: .verifier(TestIdentityVerifier()), perUserTables: .all)
        configuration.maxAttachmentBytes = 64 << 10
        try await Deployment.run(.sqliteFile, instances: 1, configuration: configuration) { deployment in
            let base = deployment.server(0)
            let client = deployment.client
            func content(_ user: Int, _ index: Int) -> [UInt8] {
                AttachmentFixture.content(2000 + (user * 977 + index * 4111) % 40_000, seed: user * 100 + index)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for user in 0..<users {
                    group.addTask {
                        let auth = [(WireHeader.auth, "user\(user)")]
                        let item = try await client.send(.post, base, "/tables/jobs", object: ["id": "job"], headers: auth)
                        try #require(item.status == .created)
                        for index in 0..<perUser {
                            let bytes = content(user, index)
                            let row = try AttachmentFixture.row("a\(index)", item: "job", content: bytes)
                            try #require(
                                try await client.send(.post, base, "/tables/jobs__attachments", object: row, headers: auth).status == .created)
                            let uploaded = try await client.send(
                                .patch, base, "/tables/jobs__attachments/a\(index)/content", bytes: bytes,
                                headers: AttachmentFixture.uploadPairs(offset: 0, user: "user\(user)"))
                            try #require(uploaded.status == .noContent && uploaded.uploadOffset == Int64(bytes.count))
                        }
                    }
                }
                try await group.waitForAll()
            }
            let missing = try await client.send(.get, base, "/tables/jobs__attachments/never/content", headers: [(WireHeader.auth, "user0")])
            #expect(missing.status == .notFound)
            try await withThrowingTaskGroup(of: Int.self) { group in
                for user in 0..<users {
                    group.addTask {
                        let auth = [(WireHeader.auth, "user\(user)")]
                        let rows = try await client.send(.get, base, "/tables/jobs__attachments", headers: auth).array
                        #expect(rows.count == perUser)
                        var matched = 0
                        for index in 0..<perUser {
                            let reply = try await client.send(.get, base, "/tables/jobs__attachments/a\(index)/content", headers: auth)
                            if reply.status == .ok, reply.body == Data(content(user, index)) { matched += 1 }
                        }
                        // A user with no row of that id: exactly the missing answer.
                        let stranger = try await client.send(
                            .get, base, "/tables/jobs__attachments/a\(user % perUser)/content", headers: [(WireHeader.auth, "nobody\(user)")])
                        #expect(stranger.status == missing.status && stranger.body == missing.body)
                        return matched
                    }
                }
                var total = 0
                for try await matched in group { total += matched }
                #expect(total == users * perUser, "every user reads back every one of their attachments")
            }
        }
    }
}
