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
    @Option(help: ArgumentHelp(
        "Also measure live sync latency over this many items: from device A's push returning to device B's observed query showing the item (0: skip).",
        valueName: "n"))
    var liveLatencySamples = 0
    @Option(help: ArgumentHelp("The sync-server for --live-latency-samples (default: start the one built beside sync-bench).", valueName: "url"))
    var server: String?
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard offlineItems > 0, pulledItems > 0, runs > 0, liveLatencySamples >= 0 else { throw ValidationError("counts must be positive") }
        if let server, URL(string: server)?.host == nil { throw ValidationError("--server must be an http URL") }
    }

    struct Result: Codable {
        var workload: String
        /// Median seconds on the plain store, and on the encrypted one (nil for key derivation).
        var plain: Double?
        var encrypted: Double
    }

    func run() async throws {
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
        if liveLatencySamples > 0 {
            results += try await liveLatency(directory: directory)
        }
        if json {
            print(String(decoding: try JSONEncoder().encode(results), as: UTF8.self))
        } else {
            print(report(results))
        }
    }

    /// The live sync latency's percentiles on plain and encrypted stores.
    func liveLatency(directory: URL) async throws -> [Result] {
        let started = server == nil ? try BenchServer() : nil
        defer { started?.stop() }
        guard let url = started?.url ?? server.flatMap(URL.init(string:)) else { throw ValidationError("--server must be an http URL") }
        var samples: [Bool: [Double]] = [:]
        for encrypted in [false, true] {
            samples[encrypted] = try await LiveLatency.measure(server: url, directory: directory, encrypted: encrypted, samples: liveLatencySamples)
        }
        return [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0)].map { name, fraction in
            Result(
                workload: "live sync latency \(name), \(liveLatencySamples) items",
                plain: LiveLatency.percentile(samples[false] ?? [], fraction),
                encrypted: LiveLatency.percentile(samples[true] ?? [], fraction))
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
    case offlineWrites, pulledPages, observedPulledPages, filteredRead, fullScan, reopen

    func title(_ bench: SyncBench) -> String {
        switch self {
        case .offlineWrites: return "offline inserts, \(bench.offlineItems) (row + queue each)"
        case .pulledPages: return "pulled pages applied, \(bench.pulledItems) items"
        case .observedPulledPages: return "the same, one observer (newest 50 by id)"
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
            case .observedPulledPages:
                try await Self.fillObserved(store, items: bench.pulledItems, table: "pulled")
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
                    "id": .string(pulledID(i)), "text": .string("pulled item \(i) \(i * 7919 % 10007)"),
                    "complete": .bool(i % 3 == 0), "updatedAt": .string("2026-01-01T00:00:00.000Z"), "version": .string("v\(i)"),
                ]
            }
            try await store.upsert(table: table, items: page)
        }
    }
}

extension Workload {
    /// ``fill(_:items:table:)`` while an observation of the table's newest 50 items (by id, the
    /// ids grow with each page) reads them again after every commit it is woken by; returns once
    /// the observer has read the state after the last page.
    static func fillObserved(_ store: SQLiteStore, items: Int, table: String) async throws {
        let query = QueryDescription(table: table, orderBy: [OrderBy("id", ascending: false)], top: 50)
        let observation = StoreObservation(changes: store.changes, topics: [.table(named: table)], removingDuplicates: {
            try await store.read { try $0.read(query).items.first?["id"]?.stringValue }
        })
        let last = pulledID(items - 1)
        let (ready, isReady) = AsyncStream<Void>.makeStream()
        let observer = Task {
            for try await newest in observation {
                isReady.yield()
                if newest == last { return }
            }
        }
        var iterator = ready.makeAsyncIterator()
        await iterator.next()
        try await fill(store, items: items, table: table)
        try await observer.value
    }

    /// The id of the `index`-th pulled item.
    static func pulledID(_ index: Int) -> String {
        String(format: "%08d-0000-4000-8000-000000000000", index)
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

// MARK: live sync latency


/// Live sync latency: the time from device A's `push` returning to device B's observed query
/// showing the item, B running live sync against a `sync-server` on loopback.
enum LiveLatency {
    /// The latencies in seconds of `samples` items, one at a time, with stores of one kind.
    static func measure(server: URL, directory: URL, encrypted: Bool, samples: Int) async throws -> [Double] {
        func device(_ name: String) async throws -> (SQLiteStore, SyncContext) {
            let encryption: StoreEncryption = encrypted ? .key(try SecretBytes.random(count: 32)) : .none
            let store = try await SQLiteStore.open(
                at: directory.appendingPathComponent("\(name)-\(encrypted).db"), encryption: encryption,
                options: StoreOptions(createIfMissing: true))
            return (store, SyncContext(client: MobileServiceClient(url: server), store: store))
        }
        let (storeA, a) = try await device("a")
        let (storeB, b) = try await device("b")
        let table = "latency\(encrypted ? "Encrypted" : "Plain")\(UInt32.random(in: 0...UInt32.max))"
        let live = try b.startLiveSync([LiveSyncTable(table)])
        let seen = SightingLog()
        let (connected, isConnected) = AsyncStream<Void>.makeStream()
        let events = Task {
            for await event in live.events {
                if case .connected = event { isConnected.yield() }
            }
        }
        let observer = Task {
            for try await result in try b.syncTable(table).observe() {
                seen.record(result.items.compactMap { $0["id"]?.stringValue })
            }
        }
        var waitForConnection = connected.makeAsyncIterator()
        await waitForConnection.next()

        var latencies: [Double] = []
        let tableA = try a.syncTable(table)
        for index in 0..<samples {
            let id = "sample-\(index)"
            _ = try await tableA.insert(["id": .string(id), "text": .string("sample \(index)")])
            try await a.push()
            let pushed = ContinuousClock.now
            let shown = await seen.wait(for: id)
            latencies.append(max(0, seconds(shown - pushed)))
        }
        observer.cancel()
        _ = await observer.result
        await live.stop()
        events.cancel()
        await storeA.close()
        await storeB.close()
        return latencies
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The value at `fraction` (0…1) of sorted `values` (nearest rank).
    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }
}

/// When each id first appeared in B's observed query, and who waits for which.
final class SightingLog: @unchecked Sendable {
    private let lock = NSLock()
    private var firstSeen: [String: ContinuousClock.Instant] = [:]
    private var waiting: [String: CheckedContinuation<ContinuousClock.Instant, Never>] = [:]

    func record(_ ids: [String]) {
        let now = ContinuousClock.now
        let woken: [(CheckedContinuation<ContinuousClock.Instant, Never>, ContinuousClock.Instant)] = lock.withLock {
            var woken: [(CheckedContinuation<ContinuousClock.Instant, Never>, ContinuousClock.Instant)] = []
            for id in ids where firstSeen[id] == nil {
                firstSeen[id] = now
                if let waiter = waiting.removeValue(forKey: id) { woken.append((waiter, now)) }
            }
            return woken
        }
        for (waiter, instant) in woken { waiter.resume(returning: instant) }
    }

    func wait(for id: String) async -> ContinuousClock.Instant {
        await withCheckedContinuation { continuation in
            let seen: ContinuousClock.Instant? = lock.withLock {
                if let seen = firstSeen[id] { return seen }
                waiting[id] = continuation
                return nil
            }
            if let seen { continuation.resume(returning: seen) }
        }
    }
}

/// A `sync-server` started beside `sync-bench` (the same build directory), on a free port.
final class BenchServer {
    let url: URL
    private let process: Process

    init() throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("sync-server")
        process = Process()
        process.executableURL = executable
        process.arguments = ["--host", "127.0.0.1", "--port", "0", "--database", "memory", "--log-level", "error"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("listening on "), let url = URL(string: String(text.dropFirst(13))) else {
            process.terminate()
            throw BenchError("sync-server did not start beside sync-bench (build it: swift build --product sync-server)")
        }
        self.url = url
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

/// A failure of the benchmark itself.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
