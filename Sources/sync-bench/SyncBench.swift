import ArgumentParser
import Foundation
import SyncClient
import SyncKeys
import SyncStore
import SyncWire

/// `sync-bench`: what encryption at rest costs, measured on this machine. Each workload runs on a
/// plain and on an encrypted store (raw data key, so key derivation is measured on its own) and
/// reports the median of several runs.
@main
struct SyncBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-bench", abstract: "Measures the sync store's workloads on a plain and an encrypted store.")

    @Option(help: "Items written through the offline table (one transaction each: row and queued operation).")
    var offlineItems = 1_000
    @Option(help: "Items applied as pulled pages of 50 (one transaction per page).") var pulledItems = 20_000
    @Option(help: "Runs of each workload; the median is reported.") var runs = 5
    @Flag(help: "Also time the key derivation of every production key profile.") var keyDerivation = false
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "Measure the server instead: a mixed load on SQLite and PostgreSQL (1 and 2 instances), and a full pull.")
    var server = false
    @Option(help: "With --server: concurrent clients.") var clients = 50
    @Option(help: "With --server: requests per client.") var operations = 300
    @Option(help: "With --server: items of the full pull.") var serverPullItems = 100_000
    @Option(help: ArgumentHelp(
        "With --server: the PostgreSQL to use, postgres://USER@HOST[:PORT][/DB] (PGPASSWORD for a password); else a private cluster.",
        valueName: "url"))
    var postgresURL: String?

    func validate() throws {
        guard offlineItems > 0, pulledItems > 0, runs > 0 else { throw ValidationError("counts must be positive") }
        guard clients > 0, operations > 0, serverPullItems > 0 else { throw ValidationError("counts must be positive") }
    }

    struct Result: Codable {
        var workload: String
        /// Median seconds on the plain store, and on the encrypted one (nil for key derivation).
        var plain: Double?
        var encrypted: Double
    }

    func run() async throws {
        if server {
            let workloads = ServerWorkloads(clients: clients, operationsPerClient: operations, pulledItems: serverPullItems, postgresURL: postgresURL)
            let results = try await workloads.run()
            print(json ? String(decoding: try JSONEncoder().encode(results), as: UTF8.self) : ServerWorkloads.report(results, clients: clients))
            return
        }
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("sync-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }

        var results: [Result] = []
        for workload in Workload.allCases {
            var times: [Bool: [Double]] = [:]
            for run in 0..<runs {
                for encrypted in [false, true] {
                    let url = directory.appendingPathComponent("\(workload)-\(run)-\(encrypted).db")
                    let encryption: StoreEncryption = encrypted ? .key(try SecretBytes.random(count: 32)) : .none
                    times[encrypted, default: []].append(try await workload.measure(at: url, encryption: encryption, bench: self))
                }
            }
            results.append(Result(workload: workload.title(self), plain: median(times[false] ?? []), encrypted: median(times[true] ?? [])))
        }
        if keyDerivation {
            for profile in [KeyProfile.default, .pbkdf2SHA512] {
                var times: [Double] = []
                for _ in 0..<runs {
                    let passphrase = try SecretBytes.random(count: 24)
                    let (envelope, _) = try KeyEnvelope.create(passphrase: passphrase, profile: profile)
                    times.append(try seconds { _ = try envelope.unlockKeys(secret: passphrase) })
                }
                results.append(Result(workload: "unlock the key envelope (\(profile.name))", plain: nil, encrypted: median(times)))
            }
        }
        if json {
            print(String(decoding: try JSONEncoder().encode(results), as: UTF8.self))
        } else {
            print(report(results))
        }
    }

    func report(_ results: [Result]) -> String {
        func cell(_ value: Double?) -> String { value.map { String(format: "%8.3f s", $0) } ?? String(repeating: " ", count: 10) }
        let width = max(44, results.map(\.workload.count).max() ?? 0)
        var lines = ["\("workload".padding(toLength: width, withPad: " ", startingAt: 0))      plain   encrypted   ratio"]
        for result in results {
            let ratio = result.plain.map { String(format: "%6.2f×", result.encrypted / max($0, 1e-9)) } ?? ""
            lines.append("\(result.workload.padding(toLength: width, withPad: " ", startingAt: 0)) \(cell(result.plain))  \(cell(result.encrypted))  \(ratio)")
        }
        lines.append("medians of \(runs) run\(runs == 1 ? "" : "s"); encrypted = SQLCipher with a raw 256-bit key, 4096-byte pages, HMAC on")
        return lines.joined(separator: "\n")
    }
}

/// The measured workloads.
enum Workload: CaseIterable {
    case offlineWrites, pulledPages, filteredRead, fullScan, reopen

    func title(_ bench: SyncBench) -> String {
        switch self {
        case .offlineWrites: return "offline inserts, \(bench.offlineItems) (row + queue each)"
        case .pulledPages: return "pulled pages applied, \(bench.pulledItems) items"
        case .filteredRead: return "filtered, ordered read ×20 of \(bench.pulledItems)"
        case .fullScan: return "full scan of \(bench.pulledItems) items"
        case .reopen: return "close and reopen the store"
        }
    }

    /// Prepares a store at `url`, then times this workload on it.
    func measure(at url: URL, encryption: StoreEncryption, bench: SyncBench) async throws -> Double {
        var store = try await SQLiteStore.open(at: url, encryption: encryption, options: StoreOptions(createIfMissing: true))
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
                await store.close()
                store = try await SQLiteStore.open(at: url, encryption: encryption)
                _ = try await store.read(QueryDescription(table: "todoItem", top: 1))
            }
            let elapsed = ContinuousClock.now - started
            await store.close()
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        } catch {
            await store.close()
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

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let elapsed = try ContinuousClock().measure(body)
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}
