import Foundation
import SyncTestSupport
import SyncWire
import Testing

/// `todo` on a full disk, on read-only media and over a damaged database: the documented exit
/// code and message, nothing lost, and listings that work without writing.
@Suite struct TodoDiskTests {
    init() throws {
        try #require(todo.isBuilt, "build the todo product first (scripts/test does)")
    }

    /// A device with `count` items, its files copied onto a new small disk.
    func deviceOnASmallDisk(items count: Int) async throws -> (Device, SmallDisk, String) {
        let device = try Device()
        for i in 0..<count { try await device.succeed(["add", "item \(i)"]) }
        let disk = try SmallDisk(bytes: 1 << 20)
        try disk.copy(contentsOf: device.directory.url)
        return (device, disk, disk.url.appendingPathComponent("todo.db").path)
    }

    /// `todo <arguments>` on the store at `store`, with the device's passphrase (and a server that
    /// refuses connections unless `server` is given).
    func run(_ device: Device, store: String, _ arguments: [String], server: URL? = nil) async throws -> ToolResult {
        try await todo.run(
            ["--store", store, "--server", server?.absoluteString ?? "http://127.0.0.1:1", "--profile", "insecure-test"] + arguments,
            environment: ["CIPHERSYNC_PASSPHRASE": device.passphrase])
    }

    @Test func aWriteOnAFullDiskIsExit6AndAListingStillWorks() async throws {
        let (device, disk, store) = try await deviceOnASmallDisk(items: 3)
        defer {
            disk.unmount()
            device.directory.remove()
        }
        try disk.fill(leaving: 8 << 10)
        let before = try fileContents(in: disk.url)
        let added = try await run(device, store: store, ["add", "no room for this"])
        #expect(added.exitCode == 6, "\(added)")
        #expect(
            added.errorLines == [
                "todo: The disk holding \(store) is full; the last change was not saved. Free some disk space, then try again (and sync again); what was saved before is kept."
            ], "\(added)")
        #expect(added.stdout.isEmpty)
        let listed = try await run(device, store: store, ["list"])
        #expect(listed.exitCode == 0, "\(listed)")
        #expect(listed.stdout.split(separator: "\n").count == 3, "\(listed)")
        let pending = try await run(device, store: store, ["pending", "--json"])
        #expect(pending.exitCode == 0, "\(pending)")
        // Nothing was created or changed by the refused write nor by the reads.
        #expect(try fileContents(in: disk.url).keys.sorted() == before.keys.sorted())
        #expect(try fileContents(in: disk.url)["todo.db"] == before["todo.db"])

        disk.removeFiller()
        let again = try await run(device, store: store, ["add", "room again"])
        #expect(again.exitCode == 0, "\(again)")
        #expect(try await run(device, store: store, ["list"]).stdout.split(separator: "\n").count == 4)
    }

    @Test func aSyncOnAFullDiskIsExit6AndSaysToFreeSpaceThenSyncAgain() async throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let serverDirectory = try TemporaryDirectory(prefix: "todo-disk-server")
        let server = try await ServerProcess.start(database: "sqlite:" + serverDirectory.path("server.db"))
        let (device, disk, store) = try await deviceOnASmallDisk(items: 3)
        defer {
            _ = server.stop()
            serverDirectory.remove()
            disk.unmount()
            device.directory.remove()
        }
        try disk.fill(leaving: 0)
        let synced = try await run(device, store: store, ["sync"], server: server.url)
        #expect(synced.exitCode == 6, "\(synced)")
        #expect(
            synced.errorLines == [
                "todo: The disk holding \(store) is full; the last change was not saved. Free some disk space, then try again (and sync again); what was saved before is kept."
            ], "\(synced)")
        // The three changes are still queued, and they reach the server once there is room.
        let pending = try await run(device, store: store, ["pending", "--json"])
        #expect(pending.exitCode == 0, "\(pending)")
        let listing = try JSONCoding.decode(JSONObject.self, from: Data(pending.stdout.utf8))
        #expect(listing["operations"]?.arrayValue?.count == 3, "\(pending)")
        disk.removeFiller()
        let again = try await run(device, store: store, ["sync"], server: server.url)
        #expect(again.exitCode == 0, "\(again)")
        #expect(again.stdout == "pushed 3 changes, pulled 3 items\n", "\(again)")
    }

    @Test func aStoreOnReadOnlyMediaCanBeListedAndNothingIsCreated() async throws {
        let (device, disk, store) = try await deviceOnASmallDisk(items: 2)
        defer {
            disk.unmount()
            device.directory.remove()
        }
        try disk.setReadOnly(true)
        let before = try fileContents(in: disk.url)
        let listed = try await run(device, store: store, ["list", "--json"])
        #expect(listed.exitCode == 0, "\(listed)")
        let items = try JSONCoding.decode([JSONObject].self, from: Data(listed.stdout.utf8))
        #expect(items.count == 2)
        #expect(try fileContents(in: disk.url) == before)
    }

    @Test func aDamagedOrTruncatedDatabaseIsExit4() async throws {
        for damage in ["page", "truncated"] {
            let device = try Device()
            defer { device.directory.remove() }
            for i in 0..<60 { try await device.succeed(["add", "item \(i) " + String(repeating: "x", count: 200)]) }
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: device.store)))
            if damage == "page" {
                // A flipped byte in every page after the first: whatever the listing reads fails its check.
                for page in 1..<(bytes.count / 4096) { bytes[page * 4096 + 200] ^= 0x01 }
            } else {
                bytes.removeLast(bytes.count / 2)
            }
            try Data(bytes).write(to: URL(fileURLWithPath: device.store))
            let listed = try await device.run(["list"])
            #expect(listed.exitCode == 4, "\(damage): \(listed)")
            #expect(listed.errorLines == ["todo: The database file is damaged or does not belong to this key."], "\(damage): \(listed)")
        }
    }
}
