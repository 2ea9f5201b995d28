import BenchProcesses
import Foundation
import Logging
import SyncClient
import SyncServer
import SyncWire

/// The `sync-server` executable running as a child process on 127.0.0.1, over a database file
/// seeded beforehand.
final class BenchServer {
    /// The URL the server announced.
    let url: URL
    private let server: ServerProcess

    /// Writes `count` items into the server database at `path` through the server's own storage
    /// (`SQLiteTableStorage`): the table and its columns as a first insert makes them, then the
    /// items by the storage's batched insert (`inTransaction(table:scope:ids:_:)`, as a batch
    /// request's inserts go), a thousand per transaction, each stamped by the storage as
    /// `sync-server` stamps an insert.
    static func seed(databaseAt path: String, count: Int) async throws {
        let logger = Logger(label: "sync-bench.seed", factory: { _ in SwiftLogNoOpLogHandler() })
        let storage = try await SQLiteTableStorage.open(.sqlite(path: path), logger: logger)
        do {
            let table = BenchItems.pulledTable
            _ = try await storage.ensureColumns(table, scope: .shared, BenchItems.userColumns)
            for start in stride(from: 0, to: count, by: 1_000) {
                let indices = start..<min(start + 1_000, count)
                let written = try await storage.inTransaction(table: table, scope: .shared, ids: indices.map(BenchItems.id)) {
                    var written = 0
                    for i in indices {
                        var item = BenchItems.userItem(i)
                        item[SystemProperty.id] = .string(BenchItems.id(i))
                        if case .written = try await storage.insert(table: table, scope: .shared, item: item) { written += 1 }
                    }
                    return written
                }
                guard written == indices.count else {
                    throw BenchError("the server's storage wrote \(written) of the \(indices.count) seeded items from \(start)")
                }
            }
            try await storage.close()
        } catch {
            try? await storage.close()
            throw error
        }
    }

    /// Starts `sync-server --host 127.0.0.1 --port 0 --database <database>` (the test support's
    /// ``ServerProcess``) and waits for its `listening on` line; its log (errors only) is discarded.
    /// - Parameters:
    ///   - tool: The `sync-server` beside this executable (``BenchTools/locate(_:)``): the one
    ///     ``ServerProcess`` runs, or the benchmark stops.
    ///   - database: `sqlite:PATH` or `memory`.
    init(tool: URL, database: String, pageSize: Int?) throws {
        let runs = ServerProcess.tool.url
        guard runs.resolvingSymlinksInPath().path == tool.resolvingSymlinksInPath().path else {
            throw BenchError("sync-server would run from \(runs.path), not from \(tool.path) beside sync-bench")
        }
        server = try ServerProcess(database: database, arguments: pageSize.map { ["--page-size", String($0)] } ?? [])
        ChildRegistry.shared.add(server.processIdentifier)
        url = server.url
    }

    /// The server's process id.
    var processIdentifier: Int32 { server.processIdentifier }

    /// The CPU time the server has used so far (user + system), or `nil` where `/proc` is missing.
    var cpuSeconds: Double? { ProcessStatistics.cpuSeconds(of: server.processIdentifier) }

    /// Sends SIGTERM and waits for the server to end.
    func stop() {
        server.stop()
        ChildRegistry.shared.remove(server.processIdentifier)
    }

    /// Checks that a seeded item reads back through the server exactly as an item the server
    /// stored itself: the same properties, and system values of the same form.
    func checkSeed() async throws {
        let client = MobileServiceClient(url: url)
        guard let seeded = try await client.table(BenchItems.pulledTable).lookup(id: BenchItems.id(0)) else {
            throw BenchError("the server does not serve the seeded item \(BenchItems.id(0))")
        }
        var probe = BenchItems.userItem(0)
        probe[SystemProperty.id] = .string(BenchItems.id(0))
        let stored = try await client.table("benchProbe").insert(probe)
        func shape(_ item: JSONObject) -> [String: String] {
            item.mapValues { value in
                switch value {
                case .string(let s) where WireDate.date(from: s) != nil: return "timestamp of \(s.count) characters"
                case .string(let s): return "string of \(s.count) characters"
                case .bool: return "bool"
                case .int: return "int"
                default: return "\(value)"
                }
            }
        }
        guard shape(seeded) == shape(stored) else {
            throw BenchError("a seeded item differs from one the server stores: \(shape(seeded)) vs \(shape(stored))")
        }
    }

    /// Changes the text of every hundredth pulled item (at least one) through the server, as
    /// another device would: each gets a new `updatedAt` and version.
    /// - Returns: The number of items changed.
    func changeOnePercent(of count: Int) async throws -> Int {
        let table = try MobileServiceClient(url: url).table(BenchItems.pulledTable)
        let indices = Array(stride(from: 50 % max(count, 1), to: count, by: 100))
        let changed = indices.isEmpty ? [0] : indices
        let change: @Sendable (Int) async throws -> Void = { i in
            _ = try await table.update([SystemProperty.id: .string(BenchItems.id(i)), "text": .string(BenchItems.text(i, revision: 1))])
        }
        // Four requests in flight, as a few busy devices would send them.
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = changed.makeIterator()
            for _ in 0..<4 {
                if let i = next.next() { group.addTask { try await change(i) } }
            }
            while try await group.next() != nil {
                if let i = next.next() { group.addTask { try await change(i) } }
            }
        }
        return changed.count
    }
}
