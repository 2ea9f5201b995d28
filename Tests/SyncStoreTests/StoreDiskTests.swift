import Foundation
import SyncKeys
import SyncSQLite
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// A full disk, a failing disk and read-only media: typed errors a person can act on, nothing
/// lost, and reads that work without writing.
@Suite struct StoreDiskTests {
    static func open(
        _ kind: StoreKind, at url: URL, passphrase: SecretBytes, create: Bool = false, readOnly: Bool = false
    )
        async throws -> SQLiteStore
    {
        try await SQLiteStore.open(
            at: url, encryption: kind.encryption(passphrase),
            options: StoreOptions(createIfMissing: create, keyProfile: .insecureTest, allowInsecureKeyProfile: true, readOnly: readOnly))
    }

    static func item(_ i: Int) -> JSONObject {
        ["id": .string("item-\(i)"), "text": .string(String(repeating: "t", count: 1_500) + "\(i)")]
    }

    @Test func sqliteFailuresAreSortedByWhatTheUserCanDo() throws {
        let database = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("store.db")
        let kind = { (code: Int32) in StoreError(SQLiteError(code: ResultCode(rawValue: code), message: "m"), database: database) }
        #expect(kind(13) == .diskFull)  // SQLITE_FULL
        #expect(kind(10) == .ioError)  // SQLITE_IOERR
        #expect(kind(1034) == .ioError)  // SQLITE_IOERR_FSYNC
        #expect(kind(522) == .corruptOrKeyMismatch)  // SQLITE_IOERR_SHORT_READ: a truncated file
        #expect(kind(11) == .corruptOrKeyMismatch)
        #expect(kind(26) == .corruptOrKeyMismatch)
        #expect(kind(1) == .database)
        #expect(kind(13).description.contains("is full") && kind(13).description.contains("Free some disk space"))
        #expect(kind(10).description.contains("I/O error") && kind(10).description.contains("Check the disk"))
    }

    @Test(arguments: StoreKind.allCases)
    func aFullDiskIsDiskFullAndLosesNothing(_ kind: StoreKind) async throws {
        let disk = try SmallDisk(bytes: 1 << 20)
        defer { disk.unmount() }
        let url = disk.url.appendingPathComponent("store.db")
        let passphrase = SecretBytes.testPassphrase()
        let store = try await Self.open(kind, at: url, passphrase: passphrase, create: true)
        try await store.upsert(table: "todo", items: [Self.item(0)])
        try disk.fill(leaving: 96 << 10)
        var written = 1
        var failure: (any Error)?
        while failure == nil, written < 500 {
            do {
                try await store.upsert(table: "todo", items: [Self.item(written)])
                written += 1
            } catch {
                failure = error
            }
        }
        let error = try #require(failure as? StoreError, "\(String(describing: failure))")
        #expect(error == .diskFull, "\(error)")
        #expect(error.description.contains("is full") && error.description.contains("Free some disk space"))
        // Every write that returned is there; with room again, writing goes on.
        #expect(try await store.read(QueryDescription(table: "todo")).items.count == written)
        disk.removeFiller()
        try await store.upsert(table: "todo", items: [Self.item(written)])
        try await store.close()
        let reopened = try await Self.open(kind, at: url, passphrase: passphrase)
        #expect(try await reopened.read(QueryDescription(table: "todo")).items.count == written + 1)
        try await reopened.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aReadOnlyOpenReadsOnAFullDiskAndOnReadOnlyMediaAndCreatesNothing(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.upsert(table: "todo", items: (0..<40).map(Self.item))
        try await store.close()
        let disk = try SmallDisk(bytes: 1 << 20)
        defer { disk.unmount() }
        try disk.copy(contentsOf: test.directory.url)
        let url = disk.url.appendingPathComponent(test.url.lastPathComponent)

        try disk.fill(leaving: 8 << 10)
        let before = try fileContents(in: disk.url)
        let onFullDisk = try await Self.open(kind, at: url, passphrase: test.passphrase, readOnly: true)
        #expect(try await onFullDisk.read(QueryDescription(table: "todo")).items.count == 40)
        await #expect(throws: StoreError.fileSystem) { try await onFullDisk.upsert(table: "todo", items: [Self.item(99)]) }
        try await onFullDisk.close()
        #expect(try fileContents(in: disk.url) == before)

        disk.removeFiller()
        try disk.setReadOnly(true)
        let media = try fileContents(in: disk.url)
        let onReadOnlyMedia = try await Self.open(kind, at: url, passphrase: test.passphrase, readOnly: true)
        #expect(try await onReadOnlyMedia.lookup(table: "todo", id: "item-7")?["id"] == "item-7")
        try await onReadOnlyMedia.close()
        #expect(try fileContents(in: disk.url) == media)
    }

    @Test(arguments: StoreKind.allCases)
    func aTruncatedDatabaseIsCorruptOrKeyMismatch(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.upsert(table: "todo", items: (0..<200).map(Self.item))
        try await store.close()
        var bytes = [UInt8](try Data(contentsOf: test.url))
        bytes.removeLast(bytes.count / 2)
        try Data(bytes).write(to: test.url)
        var damaged: SQLiteStore?
        do {
            damaged = try await test.open()
            _ = try await damaged?.read(QueryDescription(table: "todo"))
            Issue.record("read a truncated database without an error")
        } catch {
            #expect(error as? StoreError == .corruptOrKeyMismatch, "\(error)")
        }
        try? await damaged?.close()
    }
}
