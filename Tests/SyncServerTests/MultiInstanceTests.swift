import Foundation
import HTTPTypes
import Logging
import SyncClient
import SyncSQL
import SyncServer
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Two server instances on 127.0.0.1 over one PostgreSQL database, driven over real HTTP:
/// optimistic concurrency and id uniqueness hold across instances, a client reading through one
/// sees what was written through the other, and `/health` says when the database is gone.
@Suite struct MultiInstanceTests {
    @Test func concurrentPatchesOfOneVersionThroughTwoInstancesHaveOneWinner() async throws {
        try await Deployment.run(.postgres, instances: 2) { deployment in
            #expect(deployment.servers.count == 2)
            let client = deployment.client
            let created = try await client.send(.post, deployment.server(0), "/tables/todo", object: ["id": "one", "n": 0])
            let version = try #require(created.object[SystemProperty.version]?.stringValue)
            let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                for i in 1...30 {
                    group.addTask {
                        try await client.send(
                            .patch, deployment.server(i), "/tables/todo/one", object: ["n": .int(Int64(i))], headers: [("If-Match", "\"\(version)\"")]
                        )
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let winners = replies.filter { $0.status == .ok }
            try #require(winners.count == 1, "\(replies.map(\.status.code))")
            #expect(replies.filter { $0.status == .preconditionFailed }.count == 29)
            let winner = winners[0].object
            for loser in replies where loser.status == .preconditionFailed {
                #expect(loser.object == winner, "a 412 carries the winner's item")
            }
            let stored = try await client.send(.get, deployment.server(1), "/tables/todo/one").object
            #expect(stored == winner)
        }
    }

    @Test func concurrentInsertsOfOneIDThroughTwoInstancesCreateOneItem() async throws {
        try await Deployment.run(.postgres, instances: 2) { deployment in
            let client = deployment.client
            let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                for i in 0..<30 {
                    // The id in various ASCII cases: one item whatever the case.
                    let id = i % 2 == 0 ? "shared-ID" : "SHARED-id"
                    group.addTask {
                        try await client.send(.post, deployment.server(i), "/tables/todo", object: ["id": .string(id), "n": .int(Int64(i))])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let created = replies.filter { $0.status == .created }
            try #require(created.count == 1, "\(replies.map(\.status.code))")
            #expect(replies.filter { $0.status == .conflict }.count == 29)
            for conflict in replies where conflict.status == .conflict {
                #expect(conflict.object == created[0].object, "a 409 carries the stored item")
            }
            #expect(try await deployment.allRows("todo").count == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aClientPullingFromOneInstanceSeesWritesMadeThroughTheOther(_ kind: StoreKind) async throws {
        try await Deployment.run(.postgres, instances: 2) { deployment in
            let (testA, storeA) = try await TestStore.make(kind)
            let (testB, storeB) = try await TestStore.make(kind)
            do {
                let reader = SyncContext(client: MobileServiceClient(url: deployment.server(0)), store: storeA)
                let writer = SyncContext(client: MobileServiceClient(url: deployment.server(1)), store: storeB)
                let readerTable = try reader.syncTable("todo")
                let writerTable = try writer.syncTable("todo")
                for text in ["a", "b", "c"] { _ = try await writerTable.insert(["text": .string(text), "done": false]) }
                try await writer.push()
                #expect(try await readerTable.pull(Query(), queryId: "all") == 3)
                let texts = { try await readerTable.read(Query().orderBy("text")).items.compactMap { $0["text"]?.stringValue } }
                #expect(try await texts() == ["a", "b", "c"])

                var first = try #require(try await writerTable.read(Query().orderBy("text")).items.first)
                first["text"] = "a2"
                try await writerTable.update(first)
                try await writer.push()
                _ = try await readerTable.pull(Query(), queryId: "all")
                #expect(try await texts() == ["a2", "b", "c"], "the incremental pull through A delivers the update made through B")
            } catch {
                Issue.record(error)
            }
            try? await storeA.close()
            try await storeB.close()
            testA.directory.remove()
            testB.directory.remove()
        }
    }

    /// The database refusing connections (its connections ended, new ones not allowed) makes
    /// every instance's `/health` answer 503; once it accepts them again, 200.
    @Test func healthIs503WhileTheDatabaseIsUnreachable() async throws {
        let settings = try await PostgresTestDatabases.create()
        let name = SQLIdentifier.quote(settings.database)
        var servers: [RunningServer] = []
        let client = HTTPTestClient()
        do {
            for _ in 0..<2 {
                let storage = try await PostgresTableStorage.open(settings, logger: .quiet)
                servers.append(try await RunningServer.start(.testing(), storage: storage))
            }
            for server in servers {
                #expect(try await client.send(.get, server.url, "/health").status == .ok)
            }
            try await PostgresTestDatabases.administer("ALTER DATABASE \(name) ALLOW_CONNECTIONS false")
            try await PostgresTestDatabases.administer(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(settings.database)' AND pid <> pg_backend_pid()")
            for server in servers {
                let reply = try await client.send(.get, server.url, "/health")
                #expect(reply.status == .serviceUnavailable && reply.errorMessage == "The storage does not answer")
            }
            try await PostgresTestDatabases.administer("ALTER DATABASE \(name) ALLOW_CONNECTIONS true")
            // The pool reconnects after its back-off (growing from 100 ms): asked again until it
            // has, for at most 30 s.
            let deadline = ContinuousClock.now + .seconds(30)
            for server in servers {
                var status = try await client.send(.get, server.url, "/health").status
                while status != .ok, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(250))
                    status = try await client.send(.get, server.url, "/health").status
                }
                #expect(status == .ok, "healthy again once the database answers")
            }
        } catch {
            Issue.record(error)
        }
        try? await client.shutdown()
        for server in servers { await server.stop() }
        try await PostgresTestDatabases.drop(settings)
    }
}
