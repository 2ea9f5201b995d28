import ArgumentParser
import Foundation
import SyncWire

/// The sizes, runs and output of a benchmark run: the options `sync-bench` and
/// `sync-bench diagnose` share.
struct BenchOptions: ParsableArguments {
    @Option(
        name: [.customShort("n"), .long],
        help: "Items on the server (N) for the pulls and the reference (default: 1,000,000; 100,000 with diagnose).")
    var items: Int?
    @Flag(help: "N = 1,000,000.") var million = false
    @Option(name: [.customShort("m"), .long], help: "Operations (M) pushed and written offline.") var operations = 5_000
    @Option(help: "Runs of each workload but the full pull and the pushes; the median is reported.") var runs = 3
    @Option(help: "Runs of the full pull.") var pullRuns = 1
    @Option(help: "Runs of each push.") var pushRuns = 1
    @Option(help: "Size of the store sync-keys encrypts and rotates, in MB.") var storeMegabytes = 100
    @Option(help: "Items the client asks for per pull request (default: SyncTable.pull's default).") var pageSize: Int?
    @Option(help: "sync-server's --page-size (default: the server's default).") var serverPageSize: Int?
    @Option(
        help: ArgumentHelp(
            "diagnose: where the pushes go: file (the seeded server, a SQLite file that syncs every commit to disk) or memory (a second server, tables in memory).",
            valueName: "file|memory"))
    var pushDatabase = PushDatabase.file
    @Option(help: "diagnose: items of the live sync latency, one at a time.") var liveSamples = 200
    @Flag(help: "diagnose: push with the batch extension (SyncContext.setPushBatching(.automatic)) instead of one request per operation.")
    var batchedPush = false
    @Option(help: "diagnose: operations of different items a push has in flight at once (SyncContext.setPushParallelism), 1 to 16.")
    var pushParallelism = 1
    @Option(help: "diagnose store: items written through the offline table.") var offlineItems = 1_000
    @Option(help: "diagnose store: items applied as pulled pages of 50, then read.") var pulledItems = 20_000
    @Flag(help: "diagnose store: also run the writing workloads with commits not synced to the disk (the cost of durability).")
    var unsyncedCommits = false
    @Flag(help: "Print JSON.") var json = false
    @Option(help: "With --attachments: the size of the one large attachment, in MB.") var attachmentMegabytes = 100
    @Option(help: "With --attachments: attachments uploaded and downloaded.") var attachmentFiles = 1_000
    @Option(help: "With --attachments: the size of each uploaded attachment, in KB.") var attachmentKilobytes = 200
    @Option(help: "With --attachments: MB of attachments (1 MB each) in the store sync-keys rotates.") var attachmentStoreMegabytes = 1_000
    @Option(help: "diagnose server: concurrent clients.") var clients = 50
    @Option(help: "diagnose server: requests per client.") var requestsPerClient = 300
    @Option(help: "diagnose server: items of the full pull.") var serverPullItems = 100_000
    @Option(
        help: ArgumentHelp(
            "With --fleet and diagnose server: the PostgreSQL to use, postgres://USER@HOST[:PORT][/DB] (PGPASSWORD for a password); else a private cluster.",
            valueName: "url"))
    var postgresURL: String?
    @Option(help: "With --fleet: idle change streams (devices) beside the timed requests.") var fleetStreams = 1_000
    @Option(help: "With --fleet: devices writing at once while the events are timed.") var fleetWriters = 50
    @Option(help: "With --fleet: users the streams and writes belong to.") var fleetUsers = 10
    @Option(help: "With --fleet: rows of the table the requests read and patch.") var fleetRows = 20_000
    /// The default gives each round's phase 2,000 requests of each kind, about a second on SQLite
    /// (why a phase needs that long: `FleetWorkload.interleave`).
    @Option(help: "With --fleet: GETs and PATCHes timed without and with the streams.") var fleetSamples = 20_000
    @Option(help: "With --fleet: rounds of timed requests, each timing its share without and with the streams, in turns.")
    var fleetRounds = 10
    @Option(help: "With --fleet: streams a sync-server child process holds (0: skip).") var fleetHeldStreams = 10_000
    @Option(help: "With --fleet: the servers' keep-alive interval in seconds (default: the server's default, 15).")
    var fleetKeepAlive: Double?

    /// The database of the server the pushes go to.
    enum PushDatabase: String, ExpressibleByArgument {
        case file, memory
    }

    /// N: `--items`, or a million with `--million` (the command sets its own default first).
    var serverItems: Int { million ? 1_000_000 : items ?? 100_000 }

    func validate() throws {
        guard (items ?? 1) > 0, operations > 0, runs > 0, pullRuns > 0, pushRuns > 0, storeMegabytes > 0, offlineItems > 0, pulledItems > 0,
            liveSamples > 0,
            (pageSize ?? 1) > 0, (serverPageSize ?? 1) > 0, clients > 0, requestsPerClient > 0, serverPullItems > 0
        else { throw ValidationError("counts must be positive") }
        guard fleetStreams > 0, fleetWriters > 0, fleetUsers > 0, fleetRows > 0, fleetSamples > 0, fleetRounds > 0, fleetHeldStreams >= 0
        else { throw ValidationError("fleet counts must be positive") }
        guard fleetRounds <= fleetSamples else { throw ValidationError("--fleet-rounds must be at most --fleet-samples") }
        guard (fleetKeepAlive ?? 1) > 0, (fleetKeepAlive ?? 1) <= 3_600 else {
            throw ValidationError("--fleet-keep-alive must be more than 0 and at most 3600 seconds")
        }
        guard attachmentMegabytes > 0, attachmentFiles > 0, attachmentKilobytes > 0, attachmentStoreMegabytes > 0 else {
            throw ValidationError("attachment sizes and counts must be positive")
        }
    }

    /// A progress line on standard error (standard output carries only the results).
    func progress(_ text: String) {
        FileHandle.standardError.write(Data("sync-bench: \(text)\n".utf8))
    }

    /// Runs `body` with a scratch directory that is removed afterwards, also when the benchmark
    /// is interrupted (its children are stopped then).
    func inScratch(_ body: (Scratch) async throws -> [BenchRecord]) async throws -> [BenchRecord] {
        ChildRegistry.shared.installSignalHandlers()
        let scratch = try Scratch()
        do {
            let records = try await body(scratch)
            scratch.remove()
            return records
        } catch {
            ChildRegistry.shared.waitIfInterrupted()
            scratch.remove()
            throw error
        }
    }

    /// Prints `value` as JSON (keys sorted).
    func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// The 1-, 5- and 15-minute load averages (`/proc/loadavg`), to judge how quiet the machine was.
    static var loadAverage: String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        let fields = text.split(separator: " ").prefix(3)
        return fields.count == 3 ? fields.joined(separator: " ") : "unknown"
    }

    /// What a run's text report says first: the sizes, the stores, the machine.
    /// - Parameter serialPushesInMemory: Whether the serial pushes went to a server with its
    ///   tables in memory and the batched ones to the seeded server (the goals' run).
    func header(startLoad: String, attachments: Bool = false, serialPushesInMemory: Bool = false) -> [String] {
        var item = BenchItems.userItem(0)
        item[SystemProperty.id] = .string(BenchItems.id(0))
        let user = (try? JSONCoding.encode(item).count) ?? 0
        let number = { (n: Int) in [BenchRecord].number(Double(n), digits: 0) }
        let machine =
            "\(ProcessInfo.processInfo.activeProcessorCount) cores; load average at the start: \(startLoad), at the end: \(Self.loadAverage)"
        let executables = "executables from \(BenchTools.ownExecutable.deletingLastPathComponent().path)"
        if attachments {
            return [
                "sync-bench --attachments — encrypted stores (SQLCipher with a raw 256-bit key), medians of \(runs) runs; \(executables)",
                "peak RSS = the high-water mark of the process that ran the workload; \(machine)", "",
            ]
        }
        return [
            "sync-bench — N = \(number(serverItems)) items (\(user) bytes of JSON each: a GUID id, a 96-character text, a Boolean, "
                + "an integer; plus the system columns), M = \(number(operations)) operations",
            "medians of \(runs) runs (full pull: \(pullRuns), pushes: \(pushRuns)); \(executables)",
            "encrypted = SQLCipher with a raw 256-bit key, 4096-byte pages, HMAC on; peak RSS = the high-water mark of the process that ran the workload",
            "pull pages: client \(pageSize.map(String.init) ?? "default"), server \(serverPageSize.map(String.init) ?? "default"); "
                + (serialPushesInMemory
                    ? "serial pushes to a server with its tables in memory, batched pushes to the seeded server (SQLite file); "
                    : "pushes to \(pushDatabase == .file ? "the seeded server (SQLite file)" : "a server with its tables in memory"); ")
                + machine,
            "",
        ]
    }
}
