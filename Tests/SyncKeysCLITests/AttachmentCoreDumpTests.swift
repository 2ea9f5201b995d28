import Foundation
import SyncKeys
import SyncSQL
import SyncSQLite
import SyncTestSupport
import SyncWire
import Testing

/// The compliance case for attachments in memory: `todo attach` writes a file holding a marker
/// into an encrypted store and `todo export` reads it back; each process stops itself once its
/// store is closed (`CIPHERSYNC_PAUSE_STEP=closed`), `gcore` dumps it, and neither dump holds the
/// marker, the attachment's key, the data key or the passphrase. (`gcore` attaches to the one
/// stopped child: no process-wide core pattern is changed.)
@Suite(.serialized) struct AttachmentCoreDumpTests {
    @Test func noPlaintextOfAMarkedAttachmentInTheMemoryOfTodoOnceItsStoreIsClosed() async throws {
        let store = try TodoStore(prefix: "todo-attachment-core")
        let directory = store.directory
        defer { directory.remove() }
        let (path, device, environment) = (store.path, store.arguments, store.environment)
        let added = try await store.run(["add", "Delivery"])
        try #require(added.exitCode == 0, "\(added)")
        let listed = try await store.run(["list", "--all", "--json"])
        let prefix = try #require(try JSONCoding.decode([JSONObject].self, from: Data(listed.stdout.utf8)).first?["id"]?.stringValue)

        // Several segments and chunks of content, the marker in every line.
        let marker = "ATTACHMARK-" + UUID().uuidString
        let content = Array(String(repeating: marker + " scanned delivery note\n", count: 40_000).utf8)
        let source = directory.file("note.txt")
        try Data(content).write(to: source)
        let (attachDump, attached) = try await dumpAtClose(todo, device + ["attach", prefix, source.path], environment: environment)
        #expect(attached.exitCode == 0, "\(attached)")
        try FileManager.default.removeItem(at: source)
        let copy = directory.file("copy.txt")
        let (exportDump, exported) = try await dumpAtClose(todo, device + ["export", prefix, "note.txt", copy.path], environment: environment)
        #expect(exported.exitCode == 0, "\(exported)")
        #expect(try Data(contentsOf: copy) == Data(content))

        let secrets =
            CoreDump.forms(of: marker, named: "marker") + (try store.secrets())
            + CoreDump.forms(ofKey: try Self.attachmentKey(database: path, dataKey: try store.keys().dataKey), named: "attachment key")
        expectAbsent(secrets, from: attachDump, path: path)
        expectAbsent(secrets, from: exportDump, path: path)
    }

    /// The key of the store's one attachment, unwrapped from its row.
    static func attachmentKey(database: String, dataKey: SecretBytes) throws -> [UInt8] {
        let connection = try dataKey.withUnsafeBytes { try Connection.open(path: database, mode: .readOnly, key: $0) }
        defer { connection.close() }
        let rows = try connection.rows("SELECT wrappedKey FROM \"__attachments\"")
        guard rows.count == 1, case .blob(let wrapped) = rows[0][0] else { throw CoreDumpError(message: "no attachment key") }
        return try KeyWrap.unwrap(wrapped, using: try AttachmentFormat.wrappingKey(dataKey: dataKey)).bytes
    }
}
