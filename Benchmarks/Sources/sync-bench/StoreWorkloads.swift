import Foundation
import SyncClient
import SyncKeys
@_spi(Benchmarks) import SyncStore
import SyncWire

/// The store workloads, in the benchmark's own process: each on a plain and on an encrypted
/// store (a raw data key, so key derivation is measured on its own), and the key derivation of
/// every production key profile.
enum StoreBench {
    /// Runs every store workload `runs` times on each kind of store. With `--unsynced-commits`,
    /// the writing workloads run a second time in each run with commits that do not wait for the
    /// disk (`synchronous = NORMAL`, what the store did before every commit was synced), recorded
    /// as `store.<name>.unsynced`: the cost of durability, measured side by side.
    static func measure(_ bench: BenchOptions, in directory: URL) async throws -> [BenchRecord] {
        var records: [BenchRecord] = []
        for workload in Workload.allCases {
            let syncModes = bench.unsyncedCommits && workload.writes ? [true, false] : [true]
            var samples: [String: [BenchSample]] = [:]
            for run in 0..<bench.runs {
                for encrypted in [false, true] {
                    for syncs in syncModes {
                        let url = directory.appendingPathComponent("\(workload)-\(run)-\(encrypted)-\(syncs).db")
                        let encryption: StoreEncryption = encrypted ? .key(try SecretBytes.random(count: 32)) : .none
                        let seconds = try await workload.measure(at: url, encryption: encryption, syncs: syncs, bench: bench)
                        samples["\(encrypted) \(syncs)", default: []].append(BenchSample(seconds: seconds, items: workload.items(bench)))
                        KeyToolBench.removeStore(at: url)
                    }
                }
            }
            for encrypted in [false, true] {
                for syncs in syncModes {
                    records.append(
                        BenchRecord(
                            workload: "store.\(workload.name)\(syncs ? "" : ".unsynced")",
                            title: workload.title(bench) + (syncs ? "" : ", commits not synced"), store: encrypted ? "encrypted" : "plain",
                            unit: workload.unit, samples: samples["\(encrypted) \(syncs)"] ?? []))
                }
            }
        }
        return records
    }

    /// Times the unlocking of a key envelope of each production profile (the passphrase
    /// stretched once), `runs` times each.
    static func keyDerivation(runs: Int) throws -> [BenchRecord] {
        try [KeyProfile.default, .pbkdf2SHA512].map { profile in
            let samples = try (0..<runs).map { _ in BenchSample(seconds: try unlockSeconds(profile), items: 1) }
            return BenchRecord(
                workload: "key-derivation.\(profile.name)", title: "unlock the key envelope (\(profile.name))", store: nil,
                unit: "unlocks/s", samples: samples)
        }
    }

    /// The seconds one unlock of a new envelope of `profile` takes.
    static func unlockSeconds(_ profile: KeyProfile) throws -> Double {
        let passphrase = try SecretBytes.random(count: 24)
        let (envelope, _) = try KeyEnvelope.create(passphrase: passphrase, profile: profile)
        return try ContinuousClock().measure { _ = try envelope.unlockKeys(secret: passphrase) }.seconds
    }
}

/// The measured store workloads.
enum Workload: String, CaseIterable {
    case offlineWrites, pulledPages, filteredRead, fullScan, reopen

    /// The name in the JSON output (`store.<name>`).
    var name: String {
        switch self {
        case .offlineWrites: return "offline-inserts"
        case .pulledPages: return "pulled-pages"
        case .filteredRead: return "filtered-read"
        case .fullScan: return "full-scan"
        case .reopen: return "reopen"
        }
    }

    /// Whether the workload commits writes (whose cost depends on syncing them).
    var writes: Bool { self == .offlineWrites || self == .pulledPages }

    /// The items one run handles (rows read for the reads, one for the reopen).
    func items(_ bench: BenchOptions) -> Int {
        switch self {
        case .offlineWrites: return bench.offlineItems
        case .pulledPages, .fullScan: return bench.pulledItems
        case .filteredRead: return 20 * (bench.pulledItems - (bench.pulledItems + 2) / 3)  // the rows not complete
        case .reopen: return 1
        }
    }

    var unit: String {
        switch self {
        case .offlineWrites, .pulledPages: return "items/s"
        case .filteredRead, .fullScan: return "rows/s"
        case .reopen: return "opens/s"
        }
    }

    func title(_ bench: BenchOptions) -> String {
        switch self {
        case .offlineWrites: return "store: offline inserts (row + queue each)"
        case .pulledPages: return "store: pulled pages of 50 applied"
        case .filteredRead: return "store: filtered, ordered read ×20"
        case .fullScan: return "store: full scan"
        case .reopen: return "store: close and reopen"
        }
    }

    /// Prepares a store at `url`, then times this workload on it.
    func measure(at url: URL, encryption: StoreEncryption, syncs: Bool = true, bench: BenchOptions) async throws -> Double {
        var options = StoreOptions(createIfMissing: true)
        options.syncsEveryCommit = syncs
        var store = try await SQLiteStore.open(at: url, encryption: encryption, options: options)
        do {
            if self != .offlineWrites { try await Self.fill(store, items: bench.pulledItems) }
            let started = ContinuousClock.now
            switch self {
            case .offlineWrites:
                let context = SyncContext(client: MobileServiceClient(url: URL(fileURLWithPath: "/")), store: store)
                let table = try context.syncTable("todoItem")
                for i in 0..<bench.offlineItems {
                    _ = try await table.insert(["text": .string("item \(i)"), "complete": .bool(i % 3 == 0)])
                }
            case .pulledPages:
                try await Self.fill(store, items: bench.pulledItems, table: "pulled")
            case .filteredRead:
                let query = QueryDescription(
                    table: "todoItem", filter: .binary(.eq, .member("complete"), .literal(.bool(false))), orderBy: [OrderBy("text")])
                for _ in 0..<20 { _ = try await store.read(query) }
            case .fullScan:
                _ = try await store.read(QueryDescription(table: "todoItem"))
            case .reopen:
                try await store.close()
                store = try await SQLiteStore.open(at: url, encryption: encryption)
                _ = try await store.read(QueryDescription(table: "todoItem", top: 1))
            }
            let elapsed = ContinuousClock.now - started
            try await store.close()
            return elapsed.seconds
        } catch {
            try? await store.close()
            throw error
        }
    }

    /// `items` rows as a pull writes them: pages of 50, one transaction each.
    static func fill(_ store: SQLiteStore, items: Int, table: String = "todoItem") async throws {
        for start in stride(from: 0, to: items, by: 50) {
            let page: [JSONObject] = (start..<min(start + 50, items)).map { i in
                [
                    "id": .string(String(format: "%08d-0000-4000-8000-000000000000", i)), "text": .string("pulled item \(i) \(i * 7919 % 10007)"),
                    "complete": .bool(i % 3 == 0), "updatedAt": .string("2026-01-01T00:00:00.000Z"), "version": .string("v\(i)"),
                ]
            }
            try await store.upsert(table: table, items: page)
        }
    }
}
