import Foundation
import Logging
import SQLiteNIO
import SyncClient
import SyncServer
import SyncWire

/// The `sync-server` executable running as a child process on 127.0.0.1, over a database file
/// seeded beforehand.
final class BenchServer {
    /// The URL the server announced.
    let url: URL
    private let process: Process

    /// Writes `count` items into the server database at `path` exactly as `sync-server` would
    /// have stored them after `count` inserts: the table and its columns are made by the server's
    /// own storage (`SQLiteTableStorage`), then the rows go in through the server's SQLite
    /// (sqlite-nio) in one transaction, with every system column the server sets (`createdAt` =
    /// `updatedAt`, a millisecond timestamp one millisecond apart per row and in the past, so later
    /// writes through the server are newer; a random 12-byte version; `deleted` false).
    static func seed(databaseAt path: String, count: Int) async throws {
        let logger = Logger(label: "sync-bench.seed", factory: { _ in SwiftLogNoOpLogHandler() })
        let storage = try await SQLiteTableStorage.open(.sqlite(path: path), logger: logger)
        _ = try await storage.ensureColumns(BenchItems.pulledTable, scope: .shared, BenchItems.userColumns)
        try await storage.close()

        let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        do {
            // The server's insert names the columns sorted, as here.
            let columns = ["complete", "createdAt", "deleted", "id", "priority", "text", "updatedAt", "version"]
            let firstMillisecond = Int64(Date().timeIntervalSince1970 * 1000) - Int64(count) - 60_000
            let batch = 100
            _ = try await connection.query("BEGIN IMMEDIATE", [])
            for start in stride(from: 0, to: count, by: batch) {
                let rows = start..<min(start + batch, count)
                let tuple = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
                let sql = """
                    INSERT INTO "\(BenchItems.pulledTable)" (\(columns.map { "\"\($0)\"" }.joined(separator: ", "))) \
                    VALUES \(Array(repeating: tuple, count: rows.count).joined(separator: ", "))
                    """
                var binds: [SQLiteData] = []
                binds.reserveCapacity(rows.count * columns.count)
                for i in rows {
                    let stamp = BenchItems.timestamp(milliseconds: firstMillisecond + Int64(i))
                    binds += [
                        .integer(BenchItems.complete(i) ? 1 : 0), .text(stamp), .integer(0), .text(BenchItems.id(i)),
                        .integer(Int(BenchItems.priority(i))), .text(BenchItems.text(i)), .text(stamp), .text(BenchItems.version()),
                    ]
                }
                _ = try await connection.query(sql, binds)
            }
            _ = try await connection.query("COMMIT", [])
            let stored = try await connection.query("SELECT count(*) FROM \"\(BenchItems.pulledTable)\"", [])
            guard stored.first?.columns.first?.data.integer == count else {
                throw BenchError("the seeded server database holds \(stored.first?.columns.first?.data.integer ?? -1) rows, not \(count)")
            }
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Starts `sync-server --host 127.0.0.1 --port 0 --database <database>` and waits for its
    /// `listening on` line.
    /// - Parameter database: `sqlite:PATH` or `memory`.
    init(tool: URL, database: String, pageSize: Int?, errorLog: URL) throws {
        process = Process()
        process.executableURL = tool
        process.arguments =
            ["--host", "127.0.0.1", "--port", "0", "--database", database, "--log-level", "error"]
            + (pageSize.map { ["--page-size", String($0)] } ?? [])
        let stdout = Pipe()
        process.standardOutput = stdout
        _ = FileManager.default.createFile(atPath: errorLog.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: errorLog)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        ChildRegistry.shared.add(process.processIdentifier)
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let announcement = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let prefix = "listening on "
        guard announcement.hasPrefix(prefix), let url = URL(string: String(announcement.dropFirst(prefix.count))) else {
            process.terminate()
            process.waitUntilExit()
            ChildRegistry.shared.remove(process.processIdentifier)
            let log = (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
            throw BenchError("sync-server did not start (it printed '\(announcement)'): \(log.suffix(500))")
        }
        self.url = url
    }

    /// The server's process id.
    var processIdentifier: Int32 { process.processIdentifier }

    /// The CPU time the server has used so far (user + system), or `nil` where `/proc` is missing.
    var cpuSeconds: Double? { ProcessStatistics.cpuSeconds(of: process.processIdentifier) }

    /// Sends SIGTERM and waits for the server to end.
    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        ChildRegistry.shared.remove(process.processIdentifier)
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
