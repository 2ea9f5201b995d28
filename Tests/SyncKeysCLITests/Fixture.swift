import Foundation
import SyncKeys
import SyncSQLite
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// A passphrase made for one test: random and printable, never logged.
func makePassphrase() -> String {
    let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789-_.")
    var generator = SystemRandomNumberGenerator()
    return String((0..<28).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
}

/// A store created by `sync-keys init` in its own temporary directory (mode 0700).
struct Fixture {
    /// The directory holding the store.
    let directory: StoreDirectory
    let passphrase: String
    var database: URL { directory.file("store.db") }
    var envelope: URL { KeyEnvelope.url(forDatabase: database) }
    var secret: SecretBytes { SecretBytes(Array(passphrase.utf8)) }

    /// The environment that hands the passphrase to the tool.
    var passphraseEnvironment: [String: String?] { ["CIPHERSYNC_PASSPHRASE": passphrase] }

    /// `sync-keys init` with `passphrase` (a fresh one by default).
    static func create(profile: String = "insecure-test", passphrase: String = makePassphrase()) throws -> Fixture {
        let fixture = Fixture(directory: StoreDirectory(try TemporaryDirectory(prefix: "sync-keys")), passphrase: passphrase)
        let result = try CLI.run(
            ["init", "--store", fixture.database.path, "--profile", profile], environment: fixture.passphraseEnvironment)
        try #require(result.exitCode == 0, "\(result)")
        return fixture
    }

    /// A fixture over a copy of `other`'s files (same passphrase), in a new directory.
    static func copy(of other: Fixture, files: [String]? = nil) throws -> Fixture {
        let fixture = Fixture(directory: StoreDirectory(try TemporaryDirectory(prefix: "sync-keys")), passphrase: other.passphrase)
        let names = try files ?? FileManager.default.contentsOfDirectory(atPath: other.directory.url.path)
        for name in names {
            try FileManager.default.copyItem(at: other.directory.file(name), to: fixture.directory.file(name))
        }
        return fixture
    }

    /// Opens the store with its passphrase (this is where an interrupted rotation is resolved).
    func open() async throws -> SQLiteStore {
        try await SQLiteStore.open(
            at: database, encryption: .passphrase(secret),
            options: StoreOptions(keyProfile: .insecureTest, allowInsecureKeyProfile: true))
    }

    /// Runs `sync-keys <command> --store <database> …` with the passphrase in the environment.
    func run(_ command: String, _ arguments: [String] = [], environment: [String: String?] = [:]) throws -> ToolResult {
        var env = passphraseEnvironment
        for (key, value) in environment { env[key] = value }
        return try CLI.run([command, "--store", database.path] + arguments, environment: env)
    }

    /// The unlocked envelope (through the library; for key checks only).
    func keys() throws -> UnlockedKeys {
        try KeyEnvelope.read(from: envelope).unlockKeys(secret: secret, allowInsecureProfile: true)
    }

    /// The name and bytes of every file in the directory, to show that nothing changed.
    func files() throws -> [String: Data] {
        try fileContents(in: directory.url)
    }

    /// Whether `key` opens any non-empty file in the directory as a database.
    func fileOpened(by key: SecretBytes) throws -> String? {
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) {
            let path = directory.path(name)
            guard let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, size > 0 else { continue }
            let opened = try? key.withUnsafeBytes { try Connection.open(path: path, mode: .readOnly, key: $0) }
            if let opened {
                opened.close()
                return name
            }
        }
        return nil
    }

    func remove() { directory.remove() }
}

/// A directory with a store in it: a temporary one (removed by ``remove()``) or a given one.
struct StoreDirectory {
    let url: URL
    private let temporary: TemporaryDirectory?

    init(_ temporary: TemporaryDirectory) {
        self.url = temporary.url
        self.temporary = temporary
    }

    init(existing url: URL) {
        self.url = url
        self.temporary = nil
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }
    func path(_ name: String) -> String { file(name).path }
    func remove() { temporary?.remove() }
}

/// Everything a store holds that sync depends on: the rows, the queue in order, the errors and
/// the config values (delta tokens). Compared for equality before and after a key procedure.
struct StoreContent: Equatable {
    var rows: [JSONObject]
    var operations: [TableOperationRecord]
    var errors: [OperationErrorRecord]
    var config: [String: String]
}

/// Fills stores with a sync workload and reads it back through the store's public API (not the
/// code under test).
enum Workload {
    static let table = "todos"
    static let tokenKeys = (0..<8).map { "deltaToken|todos|query-\($0)" }

    /// `rows` items, `operations` queued operations (every third with an error), delta tokens.
    static func fill(_ store: SQLiteStore, rows: Int, operations: Int, seed: Int = 0) async throws {
        let batch = 5_000
        for start in stride(from: 0, to: rows, by: batch) {
            let items: [JSONObject] = (start..<min(start + batch, rows)).map { i in item(i, seed: seed) }
            try await store.upsert(table: table, items: items)
        }
        try await store.write { w in
            for i in 0..<operations {
                let kind: TableOperationRecord.Kind = [.insert, .update, .delete][i % 3]
                let id = String(format: "item-%06d-\(seed)", i)
                let op = try w.addOperation(kind: kind, table: table, itemId: id, item: ["id": .string(id), "n": .int(Int64(i))])
                if i % 3 == 0 {
                    try w.addOperationError(
                        OperationErrorRecord(
                            operationId: op.id, operationVersion: 1, kind: kind, table: table, itemId: id, statusCode: 412,
                            message: "precondition failed \(i)", item: ["id": .string(id)], serverItem: ["id": .string(id), "v": .int(2)],
                            rawResponse: "{\"id\":\"\(id)\"}"))
                }
            }
            for (i, key) in tokenKeys.enumerated() {
                try w.setConfigValue("2026-11-\(10 + i)T08:00:00.\(seed)Z", forKey: key)
            }
        }
    }

    static func item(_ i: Int, seed: Int) -> JSONObject {
        let id = String(format: "item-%06d-", i) + String(seed)
        let text = "Task \(i) " + UUID().uuidString + " Grüße ✓ " + String(repeating: "x", count: i % 60)
        var item: JSONObject = ["id": .string(id), "text": .string(text)]
        item["complete"] = .bool(i % 3 == 0)
        item["priority"] = .int(Int64(i % 7))
        item["weight"] = .double(Double(i) / 8)
        return item
    }

    static func content(of store: SQLiteStore) async throws -> StoreContent {
        try await store.read { r in
            StoreContent(
                rows: try r.read(QueryDescription(table: table, orderBy: [OrderBy("id")])).items,
                operations: try r.operations(table: nil),
                errors: try r.operationErrors(),
                config: Dictionary(
                    uniqueKeysWithValues: try tokenKeys.compactMap { key in
                        try r.configValue(forKey: key).map { (key, $0) }
                    }))
        }
    }
}
