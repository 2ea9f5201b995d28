import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Synchronization
import Testing

/// No incremental pull misses a write, tested the way the gap was found: many writers PATCH the
/// rows of one table through real servers while a reader pulls incrementally without pause; after
/// the writers stop, one more pull must leave the reader with exactly the server's rows.
@Suite struct VisibilityStressTests {
    static let writers = 16
    static let writesPerWriter = 320
    static let rowCount = 200

    @Test(arguments: StorageFactory.all)
    func concurrentWritersNeverLeaveARowStaleAtAnIncrementalReader(_ factory: StorageFactory) async throws {
        try await Deployment.run(factory) { deployment in
            let client = deployment.client
            let table = "stress"
            for row in 0..<Self.rowCount {
                let created = try await client.send(.post, deployment.server(row), "/tables/\(table)", object: ["id": .string("r\(row)"), "n": -1])
                try #require(created.status == .created)
            }

            let writing = Task {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for writer in 0..<Self.writers {
                        group.addTask {
                            var generator = SystemRandomNumberGenerator()
                            var written = 0
                            for write in 0..<Self.writesPerWriter {
                                let row = Int.random(in: 0..<Self.rowCount, using: &generator)
                                let value = JSONValue.int(Int64(writer * 100_000 + write))
                                let reply = try await client.send(.patch, deployment.server(writer), "/tables/\(table)/r\(row)", object: ["n": value])
                                if reply.status == .ok { written += 1 }
                            }
                            return written
                        }
                    }
                    return try await group.reduce(0, +)
                }
            }
            let done = Flag()
            Task {
                _ = await writing.result
                done.set()
            }

            var reader = IncrementalReader(table: table)
            var pulls = 0
            while !done.isSet {
                try await reader.pull(client, from: deployment.server(pulls))
                pulls += 1
            }
            let pagesWhileWriting = reader.requests
            let written = try await writing.value
            try await reader.pull(client, from: deployment.server(pulls))

            #expect(written == Self.writers * Self.writesPerWriter, "every PATCH succeeded")
            #expect(written >= 5000)
            #expect(pagesWhileWriting >= 10, "the reader pulled while the writers wrote")

            let stored = try await deployment.allRows(table)
            #expect(stored.count == Self.rowCount)
            let stale = stored.filter { id, row in reader.rows[id]?[SystemProperty.version] != row[SystemProperty.version] }
            #expect(stale.isEmpty, "\(stale.count) rows stale at the reader after \(pulls + 1) pulls: \(stale.keys.sorted().prefix(8))")
        }
    }
}

/// A flag one task sets and another reads.
final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
