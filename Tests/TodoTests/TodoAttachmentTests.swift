import Foundation
import SyncTestSupport
import SyncWire
import Testing

/// `todo attach`, `todo attachments` and `todo export`: local, offline, on an encrypted and a
/// plain store; bad input exits 1 with one line and writes nothing.
@Suite struct TodoAttachmentTests {
    init() throws {
        try #require(todo.isBuilt, "build the todo product first (scripts/test does)")
    }

    @Test(arguments: [false, true])
    func attachListAndExportOffline(plain: Bool) async throws {
        let device = try Device()
        defer { device.directory.remove() }
        let flags = plain ? ["--plain"] : []
        try await device.succeed(flags + ["add", "Boiler inspection"])
        let list = try await device.succeed(flags + ["list", "--all", "--json"])
        let id = try #require(try JSONCoding.decode([JSONObject].self, from: Data(list.stdout.utf8)).first?["id"]?.stringValue)
        let marker = "PHOTOMARK" + UUID().uuidString
        let content = Data((marker + String(repeating: "pixels ", count: 30_000) + marker).utf8)
        let source = device.directory.file("boiler.jpg")
        try content.write(to: source)

        let attached = try await device.succeed(flags + ["attach", String(id.prefix(6)), source.path, "--content-type", "image/jpeg"])
        #expect(attached.stdout.hasPrefix("attached boiler.jpg  \(content.count) bytes  image/jpeg  sha256 "))
        let listing = try await device.succeed(flags + ["attachments", id, "--json"])
        let rows = try JSONCoding.decode([JSONObject].self, from: Data(listing.stdout.utf8))
        #expect(rows.count == 1 && rows.first?["name"] == "boiler.jpg" && rows.first?["size"]?.intValue == Int64(content.count))
        let text = try await device.succeed(flags + ["attachments", id])
        #expect(text.stdout.hasPrefix("boiler.jpg  \(content.count) bytes  image/jpeg"))

        let copy = device.directory.file("copy.jpg")
        let exported = try await device.succeed(flags + ["export", id, "boiler.jpg", copy.path])
        #expect(exported.stdout == "exported boiler.jpg (\(content.count) bytes) to \(copy.path)\n")
        #expect(try Data(contentsOf: copy) == content)
        // Queued after the item: two inserts wait for the next push.
        let pending = try await device.run(flags + ["pending", "--json"])
        let operations = try JSONCoding.decode(JSONObject.self, from: Data(pending.stdout.utf8))["operations"]?.arrayValue ?? []
        #expect(operations.count == 2)

        // The store's own files never hold the content in an encrypted store; a plain one does.
        try FileManager.default.removeItem(at: source)
        try FileManager.default.removeItem(at: copy)
        let storeFiles = FileManager.default.enumerator(at: device.directory.url, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? []
        let hits = try markerHits([marker], in: storeFiles.filter { !$0.hasDirectoryPath })
        #expect(plain ? !hits.isEmpty : hits.isEmpty, "\(hits)")
    }

    @Test func badInputIsRefusedAndWritesNothing() async throws {
        let device = try Device()
        defer { device.directory.remove() }
        let id = try await device.add(uniqueText("Item"))
        let source = device.directory.file("note.txt")
        try Data("note".utf8).write(to: source)
        try await device.succeed(["attach", id, source.path])

        let missing = try await device.run(["attach", id, device.directory.path("none.txt")])
        #expect(missing.exitCode == 1 && missing.errorLines == ["todo: Cannot read \(device.directory.path("none.txt"))."])
        let unknownName = try await device.run(["export", id, "other.txt", device.directory.path("out.txt")])
        #expect(unknownName.exitCode == 1 && unknownName.errorLines == ["todo: The item has no attachment named 'other.txt'."])
        #expect(!FileManager.default.fileExists(atPath: device.directory.path("out.txt")))
        let exists = try await device.run(["export", id, "note.txt", source.path])
        #expect(exists.exitCode == 1 && exists.errorLines == ["todo: \(source.path) exists; nothing was written."])
        #expect(try Data(contentsOf: source) == Data("note".utf8))
        let unknownItem = try await device.run(["attachments", id.hasPrefix("0") ? "1" : "0"])
        #expect(unknownItem.exitCode == 1)
        #expect(try await device.pending().operations == 2)
    }
}
