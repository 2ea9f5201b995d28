import Foundation
import SyncKeys
import SyncSQLite
import SyncStore
import SyncTestSupport
import Testing

/// A re-encrypted copy damaged after it is written and before it is verified (the CLI's
/// `CIPHERSYNC_FAULT_DAMAGE_PAGE` test hook flips bytes of one page) is refused by `rotate` and by
/// `encrypt`: the command fails with the verification's message, every file of the store is as it
/// was, no scratch file is left, and the next run succeeds with the same content.
@Suite struct DamagedCopyTests {
    static let variable = "CIPHERSYNC_FAULT_DAMAGE_PAGE"

    /// Pages to damage: the header page, the first page after it, and pages in the middle and
    /// towards the end of the copy (which is about as large as the database it copies).
    static func pages(of database: URL) throws -> [Int] {
        let size = try #require(try FileManager.default.attributesOfItem(atPath: database.path)[.size] as? Int)
        let count = size / Connection.pageSize
        try #require(count > 20, "the store spans enough pages to damage one in the middle")
        return [1, 2, count / 2, count * 3 / 4]
    }

    @Test func rotateRefusesADamagedCopyAndKeepsTheStore() async throws {
        let template = try Fixture.create()
        defer { template.remove() }
        let store = try await template.open()
        try await Workload.fill(store, rows: 3_000, operations: 300)
        let content = try await Workload.content(of: store)
        try await store.close()
        for page in try Self.pages(of: template.database) {
            let fixture = try Fixture.copy(of: template)
            defer { fixture.remove() }
            let oldKey = try fixture.keys().dataKey
            let before = try fixture.files()
            let result = try fixture.run("rotate", environment: [Self.variable: "\(page)"])
            #expect(result.exitCode == 1 && result.stderr.contains("failed its check"), "page \(page): \(result)")
            #expect(try fixture.files() == before, "page \(page): every file as it was, no scratch file left")

            let again = try fixture.run("rotate")
            #expect(again.exitCode == 0, "page \(page): \(again)")
            try await RotationFaultTests.expectRotated(fixture, from: oldKey, content: content, "page \(page)")
        }
    }

    @Test func encryptRefusesADamagedCopyAndKeepsThePlainStore() async throws {
        let (template, content, _) = try await EncryptTests.plainStore(rows: 3_000)
        defer { template.remove() }
        // The store as a clean close leaves it (its log checkpointed), so that a refused run is
        // seen to change no byte.
        let plain = try await SQLiteStore.open(at: template.database, encryption: .none, options: StoreOptions())
        try await plain.close()
        for page in try Self.pages(of: template.database) {
            let fixture = try Fixture.copy(of: template)
            defer { fixture.remove() }
            let before = try fixture.files()
            let result = try fixture.run("encrypt", ["--profile", "insecure-test"], environment: [Self.variable: "\(page)"])
            #expect(result.exitCode == 1 && result.stderr.contains("failed its check"), "page \(page): \(result)")
            #expect(try fixture.files() == before, "page \(page): every file as it was, no key file, no scratch file")
            #expect(SQLiteStore.isPlainDatabase(at: fixture.database), "page \(page)")

            let again = try fixture.run("encrypt", ["--profile", "insecure-test"])
            #expect(again.exitCode == 0, "page \(page): \(again)")
            let store = try await fixture.open()
            #expect(try await Workload.content(of: store) == content, "page \(page)")
            try await store.close()
        }
    }

    @Test func aDamagePageThatIsNotANumberIsAUsageError() throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let before = try fixture.files()
        let result = try fixture.run("rotate", environment: [Self.variable: "middle"])
        #expect(result.exitCode == 2 && result.stderr.contains("is not a page number"), "\(result)")
        #expect(try fixture.files() == before)
    }
}
