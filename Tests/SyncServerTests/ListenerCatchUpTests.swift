import AsyncHTTPClient
import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// After its `LISTEN` connection comes back, an instance catches up with what it may have missed
/// in one read per table, whatever the number of streams and scopes it follows: the scopes are
/// read together and the states fanned out to their streams, each of which learns of the write
/// made in its scope meanwhile.
@Suite(.timeLimit(.minutes(4))) struct ListenerCatchUpTests {
    static let users = 120

    @Test func aReconnectCostsOneReadOfTheTableForAllItsScopes() async throws {
        let configuration = ServerConfiguration.testing(authentication: .verifier(TestIdentityVerifier()), perUserTables: .named(["notes"]))
        try await ChangeNotifyAcrossInstancesTests.withTwoInstances(configuration, streams: Self.users + 8) {
            first, second, watched, watch, client, streaming, database in
            // One row per user through the first instance; each user's stream on the second.
            var streams: [ChangeStreamTests.Stream] = []
            for user in 0..<Self.users {
                let token = [(WireHeader.auth, "u\(user)")]
                _ = try await client.send(.post, first.url, "/tables/notes", object: ["id": "n", "text": "x"], headers: token)
                var stream = try await ChangeStreamTests.Stream.open(streaming, second.url, tables: "notes", headers: token)
                _ = try #require(try await stream.nextEvent())
                streams.append(stream)
            }
            #expect(try await ChangeNotifyAcrossInstancesTests.cutListeners(of: database, holding: watch))
            var heard = watch.heard.makeAsyncIterator()
            // Every user's row is written while the second instance cannot hear of it.
            var written: [JSONValue] = []
            for user in 0..<Self.users {
                let reply = try await client.send(
                    .patch, first.url, "/tables/notes/n", object: ["text": "y"], headers: [(WireHeader.auth, "u\(user)")])
                #expect(reply.status == .ok)
                written.append(reply.object["updatedAt"] ?? .null)
            }
            let before = watched.statements.count
            watch.release()
            #expect(await heard.next() == .listening)
            // Each stream learns of its user's write: every scope has been read.
            for index in streams.indices {
                let event = try #require(try await streams[index].nextEvent())
                #expect(event.data["updatedAt"] == written[index], "stream of u\(index)")
            }
            let reads = watched.statements.count - before
            #expect(reads == 1, "the catch-up of \(Self.users) streams in \(Self.users) scopes made \(reads) storage queries")
        }
    }
}
