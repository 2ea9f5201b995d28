import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Synchronization
import Testing

/// A bounded load on two instances over one PostgreSQL database, over real HTTP on the
/// loopback: 50 clients × 1,000 operations — inserts of their own items, conditional updates of
/// their own items and of a few items every client contends for, filtered reads. Afterwards:
/// no 5xx, every acknowledged write is in the database with its acknowledged version, and every
/// contested version had exactly one winner (the acknowledged updates of each contested item
/// form one chain from its first version to the stored one).
@Suite struct LoadTests {
    static let clients = 50
    static let operationsPerClient = 1_000
    static let contestedItems = 10
    static let table = "load"

    /// What one client saw.
    struct Outcome: Sendable {
        var serverErrors: [String] = []
        var unexpected: [String] = []
        /// Its own items: the last acknowledged version and value.
        var own: [String: (version: String, n: Int64)] = [:]
        /// Acknowledged updates of contested items: (item, version replaced, new version, value).
        var contested: [(id: String, from: String, to: String, n: Int64)] = []
    }

    @Test func fiftyClientsThroughTwoInstancesLoseNoAcknowledgedWrite() async throws {
        try await Deployment.run(.postgres, instances: 2) { deployment in
            let client = deployment.client
            var initial: [String: String] = [:]
            for item in 0..<Self.contestedItems {
                let id = "hot\(item)"
                let created = try await client.send(
                    .post, deployment.server(item), "/tables/\(Self.table)", object: ["id": .string(id), "n": 0, "owner": "none"])
                initial[id] = try #require(created.object[SystemProperty.version]?.stringValue)
            }
            let firstVersions = initial

            let outcomes = try await withThrowingTaskGroup(of: Outcome.self) { group in
                for index in 0..<Self.clients {
                    group.addTask { try await Self.runClient(index, deployment, contested: firstVersions) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }

            let serverErrors = outcomes.flatMap(\.serverErrors)
            #expect(serverErrors.isEmpty, "\(serverErrors.count) 5xx: \(serverErrors.prefix(5))")
            let unexpected = outcomes.flatMap(\.unexpected)
            #expect(unexpected.isEmpty, "\(unexpected.count) unexpected replies: \(unexpected.prefix(5))")

            let stored = try await deployment.allRows(Self.table)
            var lost: [String] = []
            for outcome in outcomes {
                for (id, acknowledged) in outcome.own {
                    let row = stored[id]
                    if row?[SystemProperty.version]?.stringValue != acknowledged.version || row?["n"] != .int(acknowledged.n) { lost.append(id) }
                }
            }
            #expect(lost.isEmpty, "\(lost.count) acknowledged writes not in the database as acknowledged: \(lost.prefix(5))")
            #expect(stored.count == Self.contestedItems + outcomes.reduce(0) { $0 + $1.own.count })

            let updates = outcomes.flatMap(\.contested)
            #expect(updates.count >= Self.contestedItems, "contested items were updated")
            for (id, first) in firstVersions {
                let chain = updates.filter { $0.id == id }
                let byBase = Dictionary(grouping: chain, by: \.from)
                #expect(byBase.values.allSatisfy { $0.count == 1 }, "\(id): one winner per version")
                // Follow the chain from the first version: it must use every acknowledged update
                // and end at the stored version.
                var version = first
                var n: Int64 = 0
                var steps = 0
                while let next = byBase[version]?.first {
                    version = next.to
                    n = next.n
                    steps += 1
                    if steps > chain.count { break }
                }
                #expect(steps == chain.count, "\(id): every acknowledged update is in one chain")
                #expect(
                    stored[id]?[SystemProperty.version]?.stringValue == version && stored[id]?["n"] == .int(n),
                    "\(id): the last acknowledged update is stored")
            }
        }
    }

    /// One client's operations: a quarter each inserts, updates of its own items, updates of
    /// contested items (from the version it last saw; a 412 tells it the current one), reads.
    static func runClient(_ index: Int, _ deployment: Deployment, contested: [String: String]) async throws -> Outcome {
        var outcome = Outcome()
        var known = contested
        var generator = SystemRandomNumberGenerator()
        let client = deployment.client
        let owner = "c\(index)"
        for operation in 0..<operationsPerClient {
            let server = deployment.server(index + operation)
            let value = Int64(index * 1_000_000 + operation)
            let reply: Reply
            let expected: Set<Int>
            switch operation % 4 {
            case 0:
                let id = "\(owner)-\(operation)"
                reply = try await client.send(
                    .post, server, "/tables/\(table)", object: ["id": .string(id), "n": .int(value), "owner": .string(owner)])
                expected = [201]
                if reply.status == .created, let version = reply.object[SystemProperty.version]?.stringValue { outcome.own[id] = (version, value) }
            case 1 where !outcome.own.isEmpty:
                let id = outcome.own.keys.randomElement(using: &generator) ?? ""
                let version = outcome.own[id]?.version ?? ""
                reply = try await client.send(
                    .patch, server, "/tables/\(table)/\(id)", object: ["n": .int(value)], headers: [("If-Match", "\"\(version)\"")])
                expected = [200]
                if reply.status == .ok, let next = reply.object[SystemProperty.version]?.stringValue { outcome.own[id] = (next, value) }
            case 1, 2:
                let id = "hot\(Int.random(in: 0..<contestedItems, using: &generator))"
                let base = known[id] ?? ""
                reply = try await client.send(
                    .patch, server, "/tables/\(table)/\(id)", object: ["n": .int(value)], headers: [("If-Match", "\"\(base)\"")])
                expected = [200, 412]
                if let next = reply.object[SystemProperty.version]?.stringValue {
                    if reply.status == .ok { outcome.contested.append((id, base, next, value)) }
                    known[id] = next
                }
            default:
                let filter = ODataQuery.encode("owner eq '\(owner)' and n ge \(value - 500)")
                reply = try await client.send(.get, server, "/tables/\(table)?$filter=\(filter)&$orderby=n%20desc&$top=20")
                expected = [200]
                if reply.status == .ok, reply.array.contains(where: { $0["owner"]?.stringValue != owner }) {
                    outcome.unexpected.append("a read of \(owner) returned another owner's row")
                }
            }
            if reply.status.code >= 500 {
                outcome.serverErrors.append("\(reply.status.code) \(reply.errorMessage ?? "")")
            } else if !expected.contains(reply.status.code) {
                outcome.unexpected.append("\(reply.status.code) \(reply.errorMessage ?? "")")
            }
        }
        return outcome
    }
}
