import Foundation
import SyncTestSupport
import SyncWire
import Testing

/// `todo sync` sends an attachment's content after its rows; on another device `todo sync`
/// brings the metadata and `todo export` downloads the content on demand, on an encrypted and a
/// plain store, through the built executables and one `sync-server` process.
@Suite struct TodoAttachmentSyncTests {
    init() throws {
        try #require(todo.isBuilt && ServerProcess.tool.isBuilt, "build the todo and sync-server products first (scripts/test does)")
    }

    @Test(arguments: [false, true])
    func anAttachmentSyncsToAnotherDeviceAndIsExportedThere(plain: Bool) async throws {
        let serverDirectory = try TemporaryDirectory(prefix: "todo-server")
        defer { serverDirectory.remove() }
        var server = try await ServerProcess.start(database: "sqlite:" + serverDirectory.path("server.db"))
        let a = try Device(), b = try Device()
        defer {
            a.directory.remove()
            b.directory.remove()
        }
        let flags = plain ? ["--plain"] : []
        try await a.succeed(flags + ["add", "Boiler inspection"])
        let list = try await a.succeed(flags + ["list", "--all", "--json"])
        let id = try #require(try JSONCoding.decode([JSONObject].self, from: Data(list.stdout.utf8)).first?["id"]?.stringValue)
        let content = Data((0..<400_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 8) })
        let source = a.directory.file("boiler.jpg")
        try content.write(to: source)
        try await a.succeed(flags + ["attach", id, source.path, "--content-type", "image/jpeg"])

        try await a.succeed(flags + ["sync"], server: server.url)
        let pending = try await a.succeed(flags + ["pending", "--json"])
        #expect(try JSONCoding.decode(JSONObject.self, from: Data(pending.stdout.utf8))["operations"]?.arrayValue == [])
        let synced = try await b.succeed(flags + ["sync"], server: server.url)
        #expect(synced.stdout == "pushed 0 changes, pulled 1 item\n")
        let listing = try await b.succeed(flags + ["attachments", id, "--json"])
        #expect(try JSONCoding.decode([JSONObject].self, from: Data(listing.stdout.utf8)).first?["name"] == "boiler.jpg")

        let copy = b.directory.file("copy.jpg")
        let offline = try await b.run(flags + ["export", id, "boiler.jpg", copy.path])
        // Not downloaded yet and no server: one line, exit 1, no file.
        #expect(offline.exitCode == 1, "\(offline)")
        #expect(offline.errorLines == ["todo: SyncError.attachmentContentUnavailable: The attachment's content could not be downloaded."])
        #expect(!FileManager.default.fileExists(atPath: copy.path))
        try await b.succeed(flags + ["export", id, "boiler.jpg", copy.path], server: server.url)
        #expect(try Data(contentsOf: copy) == content)
        // Downloaded once: exported again with the server unreachable.
        let again = b.directory.file("again.jpg")
        try await b.succeed(flags + ["export", id, "boiler.jpg", again.path])
        #expect(try Data(contentsOf: again) == content)
        #expect(server.stop().status == 0)
    }
}
