import Foundation
import SyncClient
import SyncKeys
import SyncSQL
import SyncSQLite
@_spi(Testing) import SyncStore
import SyncWire

/// The references of the headline that run in a child process of their own: what SQLCipher
/// alone does with the same rows, through SyncSQLite.
extension ChildWorkload {
    /// The offline writes' reference: for each of `count` items, the two `INSERT`s an offline
    /// write makes (the row into the table the sync table created, the operation into the
    /// store's queue) in one transaction of their own, on the store's own connection (its journal
    /// mode and its synced commits), each statement prepared once. The table is made by one
    /// insert through the sync table before the measured part, so the row goes into the same
    /// schema (`id` with `NOCASE`) and the same indexes.
    func offlineReference(at url: URL, encryption: StoreEncryption) async throws -> ChildReport {
        if FileManager.default.fileExists(atPath: url.path) { throw BenchError("\(url.path) exists; a fresh store was expected") }
        let store = try await SQLiteStore.open(at: url, encryption: encryption, options: StoreOptions(createIfMissing: true))
        do {
            let context = SyncContext(client: MobileServiceClient(url: URL(fileURLWithPath: "/")), store: store)
            _ = try await context.syncTable(BenchItems.pushedTable).insert(BenchItems.userItem(count))
            let createdAt = WireDate.string(from: Date()), count = count
            let writes: [(row: [SQLValue], operation: [SQLValue])] = try (0..<count).map { i in
                let id = UUID().uuidString.lowercased()
                var item = BenchItems.userItem(i)
                item[SystemProperty.id] = .string(id)
                let row: [SQLValue] = [
                    .text(id), .integer(BenchItems.complete(i) ? 1 : 0), .integer(BenchItems.priority(i)), .text(BenchItems.text(i)),
                ]
                let operation: [SQLValue] = [
                    .integer(Int64(TableOperationRecord.Kind.insert.rawValue)), .integer(Int64(TableOperationRecord.State.pending.rawValue)),
                    .text(BenchItems.pushedTable), .text(id), .text(String(decoding: try JSONCoding.encode(item), as: UTF8.self)), .integer(1),
                    .text(createdAt),
                ]
                return (row, operation)
            }
            let report = try await store.withConnection { connection in
                let row = try connection.prepare(
                    "INSERT INTO \"\(BenchItems.pushedTable)\" (\"id\", \"complete\", \"priority\", \"text\") VALUES (?, ?, ?, ?)")
                let operation = try connection.prepare(
                    """
                    INSERT INTO "__operations" ("kind", "state", "tableName", "itemId", "item", "version", "createdAt") \
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """)
                let cpu = ProcessStatistics.ownCPUSeconds
                let elapsed = try ContinuousClock().measure {
                    for write in writes {
                        try connection.transaction {
                            try row.run(write.row)
                            try operation.run(write.operation)
                        }
                    }
                }
                return ChildReport(
                    seconds: elapsed.seconds, items: count, transferred: nil, cpuSeconds: ProcessStatistics.ownCPUSeconds - cpu,
                    peakRSSBytes: ProcessStatistics.ownPeakResidentBytes)
            }
            try await store.close()
            return report
        } catch {
            try? await store.close()
            throw error
        }
    }

    /// The key tools' reference: `sqlcipher_export` of the database at `url` (opened with its key,
    /// or plain) into a new database at `target` keyed with a new raw key, through SyncSQLite's
    /// own connection (CipherSync's page size and cipher settings). Timed from the open to the
    /// export's commit; `items` is the database's size in bytes.
    func exportReference(at url: URL, encryption: StoreEncryption) throws -> ChildReport {
        guard let target else { throw BenchError("the export needs --target") }
        if FileManager.default.fileExists(atPath: target) { throw BenchError("\(target) exists; a new database was expected") }
        let bytes = try KeyToolBench.size(of: url)
        let newKey = try SecretBytes.random(count: 32)
        // The source is opened without the right to create files, and so is what it attaches:
        // the new database starts as an empty file, as a re-encryption's does.
        guard FileManager.default.createFile(atPath: target, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw BenchError("cannot create \(target)")
        }
        let cpu = ProcessStatistics.ownCPUSeconds
        let elapsed = try ContinuousClock().measure {
            func open(_ key: UnsafeRawBufferPointer?) throws -> Connection {
                try Connection.open(path: url.path, mode: .readWrite, key: key)
            }
            let connection: Connection
            if case .key(let key) = encryption { connection = try key.withUnsafeBytes(open) } else { connection = try open(nil) }
            defer { connection.close() }
            try newKey.withUnsafeBytes { try connection.attach(path: target, as: "copy", key: $0) }
            _ = try connection.scalar("SELECT sqlcipher_export('copy')")
            try connection.detach("copy")
        }
        return ChildReport(
            seconds: elapsed.seconds, items: bytes, transferred: nil, cpuSeconds: ProcessStatistics.ownCPUSeconds - cpu,
            peakRSSBytes: ProcessStatistics.ownPeakResidentBytes)
    }
}
