import Foundation
import SyncClient
import SyncKeys
import SyncStore
import SyncTestSupport
import SyncWire
import Testing
import TodoApp

/// `todo push` and `todo pull` killed with SIGKILL at random moments from outside and at the
/// client's own fault-injection steps, each kill followed by a normal `todo sync`, against the
/// real `sync-server`: no conflict, no lost local change, no duplicate or missing row, and the
/// encrypted store always opens.
@Suite struct TodoCrashTests {
    init() throws {
        try #require(todo.isBuilt && ServerProcess.tool.isBuilt, "build the todo and sync-server products first (scripts/test does)")
    }

    /// What an item is, for comparing the device, the server and what the test did.
    struct Entry: Equatable, CustomStringConvertible {
        var text: String
        var complete: Bool
        var description: String { "\(text)\(complete ? " (done)" : "")" }
    }

    /// The kill points asked for, per command.
    static let killsPerCommand = 50

    @Test func killedPushesAndPullsMakeNoConflictAndLoseNothing() async throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let device = try Device()
        defer { device.directory.remove() }
        let server = try await ServerProcess.start(arguments: ["--page-size", "1000"])
        defer { server.stop() }
        let other = try MobileServiceClient(url: server.url).table(TodoDevice.tableName)  // another device, online
        let passphrase = SecretBytes(Array(device.passphrase.utf8))
        var model: [String: Entry] = [:]
        var serial = 0
        func nextText(_ label: String) -> String {
            serial += 1
            return "\(label) \(serial)"
        }

        // 300 changes queued on the encrypted store.
        try await Self.withLocal(device, passphrase) { local in
            for _ in 0..<300 {
                let text = nextText("queued")
                let item = try await local.add(text: text)
                model[try #require(item["id"]?.stringValue)] = Entry(text: text, complete: false)
            }
        }

        var killed = (push: 0, pull: 0)
        var settledUncertain = 0
        var round = 0
        // How long a push or pull that is not killed lasts, measured as the test goes (a sync
        // is an upper bound); random kills land within it.
        var lasts = ["push": 1.0, "pull": 1.0]
        while killed.push < Self.killsPerCommand || killed.pull < Self.killsPerCommand {
            round += 1
            try #require(round <= 4 * Self.killsPerCommand, "too few kills landed (seed \(seed))")
            let pulling = killed.push >= Self.killsPerCommand || (killed.pull < Self.killsPerCommand && round % 2 == 0)
            let synced = model.keys.sorted().shuffled(using: &random)
            // Check the device after the previous round's sync, then queue local changes: new
            // items, and for a push also edits and deletes of synced ones.
            let queued = try await Self.withLocal(device, passphrase) { local in
                guard round > 1 else { return try await local.context.pendingOperationsCount }
                try await Self.expectSettled(local, model, "round \(round - 1), seed \(seed)")
                for _ in 0..<(pulling ? 5 : 8) {
                    let text = nextText("added")
                    let item = try await local.add(text: text)
                    model[try #require(item["id"]?.stringValue)] = Entry(text: text, complete: false)
                }
                if !pulling {
                    for id in synced.prefix(12) {
                        if Bool.random(using: &random) {
                            let text = nextText("edited")
                            try await local.edit(id, text: text, complete: Bool.random(using: &random))
                            model[id] = try #require(try await local.table.lookup(id: id)).entry
                        } else {
                            try await local.delete(id)
                            model[id] = nil
                        }
                    }
                }
                return try await local.context.pendingOperationsCount
            }
            if pulling {
                // Another device changes the server: new items, edits and deletes of synced ones
                // (with the pushed ones, more than one page for the pull).
                for _ in 0..<30 {
                    let text = nextText("remote")
                    let item = try await other.insert(["text": .string(text), "complete": false])
                    model[try #require(item["id"]?.stringValue)] = Entry(text: text, complete: false)
                }
                for id in synced.prefix(10) {
                    let text = nextText("remote edit")
                    _ = try await other.update(["id": .string(id), "text": .string(text), "complete": true])
                    model[id] = Entry(text: text, complete: true)
                }
                for id in synced.dropFirst(10).prefix(15) {
                    try await other.delete(id: id)
                    model[id] = nil
                }
            }

            // The kill: at a random moment, or at a step of the client's own.
            let command = pulling ? "pull" : "push"
            let result: ToolResult
            if round % 2 == 0 {
                let step =
                    pulling && Bool.random(using: &random)
                    ? "pull-page:\(Int.random(in: 1...2, using: &random))" : "push-sent:\(Int.random(in: 1...queued, using: &random))"
                result = try await device.run([command], server: server.url, environment: ["CIPHERSYNC_FAULT_STEP": step])
                #expect(result.wasKilled, "the step \(step) was reached: \(result) (seed \(seed))")
            } else {
                let delay = Double.random(in: 0.1...0.9, using: &random) * (lasts[command] ?? 1)
                let started = Date()
                result = try await device.run([command], server: server.url, killAfter: delay)
                if !result.wasKilled { lasts[command] = Date().timeIntervalSince(started) }
            }
            if result.wasKilled {
                if pulling { killed.pull += 1 } else { killed.push += 1 }
            } else {
                try #require(result.exitCode == 0, "\(command) ended on its own: \(result) (seed \(seed))")
            }

            // The store opens after every kill; what the push left maybe on the server is marked.
            settledUncertain += try await Self.withLocal(device, passphrase) { local in
                try await local.context.pendingOperations().filter { $0.state == .attempted }.count
            }

            // A normal sync settles everything: no conflict, nothing queued, everything everywhere.
            let started = Date()
            let sync = try await device.run(["sync"], server: server.url)
            lasts[command] = min(lasts[command] ?? 1, Date().timeIntervalSince(started))
            try #require(sync.exitCode == 0, "sync after a killed \(command) (round \(round), seed \(seed)): \(sync)")
            let onServer = try await Self.serverItems(other)
            #expect(onServer.count == model.count, "no duplicate or missing server row (round \(round), seed \(seed))")
            let serverEntries = try Self.entries(onServer)
            #expect(serverEntries == model, "the server after round \(round) (seed \(seed)): \(Self.difference(serverEntries, model))")
        }
        try await Self.withLocal(device, passphrase) { try await Self.expectSettled($0, model, "round \(round), seed \(seed)") }
        #expect(killed.push >= Self.killsPerCommand && killed.pull >= Self.killsPerCommand)
        #expect(settledUncertain > 0, "some kills left changes that may have reached the server (seed \(seed))")
    }

    /// Nothing queued, no error, and the device holds exactly `model` (no `deleted` flag).
    static func expectSettled(_ local: TodoDevice, _ model: [String: Entry], _ context: String) async throws {
        #expect(try await local.context.pendingOperationsCount == 0, "\(context)")
        #expect(try await local.context.operationErrors().isEmpty, "\(context)")
        let items = try await local.items(all: true)
        #expect(items.allSatisfy { $0["deleted"] == nil }, "no deleted flag as a user property (\(context))")
        let entries = try Self.entries(items)
        #expect(entries == model, "the device after \(context): \(Self.difference(entries, model))")
    }

    /// Every item the server has (not deleted), page by page.
    static func serverItems(_ table: RemoteTable) async throws -> [JSONObject] {
        var items: [JSONObject] = []
        while true {
            let page = try await table.read(Query().select("id", "text", "complete").orderBy("id").skip(items.count).top(1000)).items
            items += page
            if page.count < 1000 { return items }
        }
    }

    /// Opens the device's store in this process (no process of `todo` runs meanwhile).
    static func withLocal<T: Sendable>(
        _ device: Device, _ passphrase: SecretBytes, _ body: (TodoDevice) async throws -> T
    ) async throws -> T {
        let local = try await TodoDevice.open(
            store: URL(fileURLWithPath: device.store), encryption: .passphrase(passphrase),
            options: StoreOptions(createIfMissing: true, keyProfile: .insecureTest, allowInsecureKeyProfile: true),
            server: URL(string: "http://127.0.0.1:1")!)
        do {
            let result = try await body(local)
            try await local.close()
            return result
        } catch {
            try? await local.close()
            throw error
        }
    }

    static func entries(_ items: [JSONObject]) throws -> [String: Entry] {
        var entries: [String: Entry] = [:]
        for item in items {
            let id = try #require(item["id"]?.stringValue)
            #expect(entries[id] == nil, "one row per id")
            entries[id] = item.entry
        }
        return entries
    }

    static func difference(_ actual: [String: Entry], _ expected: [String: Entry]) -> String {
        let missing = expected.keys.filter { actual[$0] == nil }.count
        let extra = actual.keys.filter { expected[$0] == nil }.count
        let changed = expected.keys.filter { actual[$0] != nil && actual[$0] != expected[$0] }.count
        return "\(missing) missing, \(extra) extra, \(changed) different"
    }
}

extension JSONObject {
    fileprivate var entry: TodoCrashTests.Entry {
        TodoCrashTests.Entry(text: self["text"]?.stringValue ?? "", complete: self["complete"]?.boolValue ?? false)
    }
}
