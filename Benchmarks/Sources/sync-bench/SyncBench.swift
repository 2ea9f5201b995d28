import ArgumentParser
import Foundation
import SyncWire

/// `sync-bench`: CipherSync measured on this machine, end to end (the real `sync-server` as a
/// child process, the client in child processes of its own, `sync-keys` as shipped) and store by
/// store, each on a plain and on an encrypted store; medians of several runs.
@main
struct SyncBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-bench",
        abstract: "Measures CipherSync on this machine: the sync path end to end and the store's own workloads, plain and encrypted.",
        discussion: """
            Workloads (--workloads, comma-separated; all by default):
              reference         N rows inserted straight through SQLCipher (one prepared statement, one
                                transaction): the ceiling a pull can approach
              full-pull         SyncTable.pull with a query id of the N items of a seeded sync-server
                                (a child process on 127.0.0.1) into a fresh store
              incremental-pull  the same pull again after 1 % of the server's items changed
              observed-pull     the full pull while one observer shows the table's newest 50 items
                                (SyncTable.observe), timed until it shows the last item; with
                                full-pull the two take turns run by run, and the observer's cost
                                is the median of each pair's ratio
              round-trip        M requests of GET /health, one at a time, through the client's HTTP
                                transport as a push sends: the floor under a push of one request
                                at a time (both HTTP stacks, loopback, no table work)
              bare-inserts      M inserts, one at a time, from a bare socket (ready-made HTTP/1.1 text,
                                no client stack, no store) to the pushes' server: what the server
                                alone allows a push of one request at a time
              push-inserts      M queued inserts pushed; push-updates: M queued updates pushed
              offline-writes    M inserts through the sync table (row and queued operation each)
              offline-reference the same M rows and queued operations written straight through SQLCipher
                                on the store's connection, two prepared INSERTs in one transaction each
              encrypt, rotate   sync-keys encrypt / rotate on a store of --store-megabytes MB
              export            sqlcipher_export of the same plain and encrypted stores into a new keyed
                                database (the reference of encrypt and rotate), each run beside theirs
              live-latency      live sync: from device A's push returning to device B's observed query
                                showing the item (B runs startLiveSync; a server with tables in memory)
              store             the store's workloads in this process
              key-derivation    unlocking a key envelope of each production key profile
              tpm-unlock        unlocking a key envelope through its TPM slot (a software TPM on
                                loopback, a new connection per unlock; no PIN and PIN) and through
                                its passphrase slot (default profile)
            --attachments runs the attachment workloads instead, on encrypted stores, each beside its
            reference from the same run: a file of --attachment-megabytes MB attached and exported
            (reference: OpenSSL's AES-256-GCM over the same file in 1 MiB pieces, fsync'd once),
            --attachment-files attachments of --attachment-kilobytes KB uploaded by a push and
            downloaded (reference: the same content sent and fetched from a bare socket), and
            sync-keys rotate of a store before and after --attachment-store-megabytes MB of
            attachments were added.
            Each client workload runs in a child process of its own, so its peak memory is its own.
            The encrypted store has a raw 256-bit key: key derivation is measured on its own.
            sync-server and sync-keys are taken from the directory of this executable: build them
            into the scratch directory sync-bench is built into (CONTRIBUTING.md, Benchmarks). The
            pushes go to the seeded server (a SQLite
            file) or, with --push-database memory, to a second server keeping its tables in memory.
            The full pull and the pushes run --pull-runs / --push-runs times (1 by default).
            """,
        subcommands: [ChildWorkload.self, MeasureTool.self])

    @Option(help: ArgumentHelp("Workloads to run, comma-separated (default: all).", valueName: "names"))
    var workloads: String?
    @Option(
        name: [.customShort("n"), .long],
        help: "Items on the server (N) for the pulls and the reference (default: 100,000; 1,000,000 with --headline).")
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
            "Where the pushes go: file (the seeded server, a SQLite file that syncs every commit to disk) or memory (a second server, tables in memory).",
            valueName: "file|memory"))
    var pushDatabase = PushDatabase.file
    @Option(help: "Items of the live sync latency, one at a time.") var liveSamples = 200
    @Flag(help: "Push with the batch extension (SyncContext.setPushBatching(.automatic)) instead of one request per operation.")
    var batchedPush = false
    @Option(help: "Operations of different items a push has in flight at once (SyncContext.setPushParallelism), 1 to 16.")
    var pushParallelism = 1
    @Option(help: "Store workload: items written through the offline table.") var offlineItems = 1_000
    @Option(help: "Store workloads: items applied as pulled pages of 50, then read.") var pulledItems = 20_000
    @Flag(help: "Store workloads: also run the writing ones with commits not synced to the disk (the cost of durability).")
    var unsyncedCommits = false
    @Flag(help: "Print JSON: one object per workload and store kind.") var json = false
    @Flag(
        help: ArgumentHelp(
            "Run exactly the workloads of the performance goals and print each goal's ratio to its reference measured in the same run (sized by -n, -m, --store-megabytes and the runs options)."
        ))
    var headline = false
    @Flag(help: "Run the attachment workloads and print each goal's ratio to its reference measured in the same run.")
    var attachments = false
    @Option(help: "With --attachments: the size of the one large attachment, in MB.") var attachmentMegabytes = 100
    @Option(help: "With --attachments: attachments uploaded and downloaded.") var attachmentFiles = 1_000
    @Option(help: "With --attachments: the size of each uploaded attachment, in KB.") var attachmentKilobytes = 200
    @Option(help: "With --attachments: MB of attachments (1 MB each) in the store sync-keys rotates.") var attachmentStoreMegabytes = 1_000
    @Flag(help: "Measure the server instead: a mixed load on SQLite and PostgreSQL (1 and 2 instances), and a full pull.")
    var serverWorkloads = false
    @Option(help: "With --server-workloads: concurrent clients.") var clients = 50
    @Option(help: "With --server-workloads: requests per client.") var requestsPerClient = 300
    @Option(help: "With --server-workloads: items of the full pull.") var serverPullItems = 100_000
    @Option(
        help: ArgumentHelp(
            "With --server-workloads: the PostgreSQL to use, postgres://USER@HOST[:PORT][/DB] (PGPASSWORD for a password); else a private cluster.",
            valueName: "url"))
    var postgresURL: String?
    @Flag(
        help: ArgumentHelp(
            "Measure a fleet instead: idle change streams beside timed GETs and PATCHes on SQLite (1 instance) and PostgreSQL (2 instances), their storage queries, write → event latency, and a sync-server holding many streams."
        ))
    var fleet = false
    @Option(help: "With --fleet: idle change streams (devices) beside the timed requests.") var fleetStreams = 1_000
    @Option(help: "With --fleet: devices writing at once while the events are timed.") var fleetWriters = 50
    @Option(help: "With --fleet: users the streams and writes belong to.") var fleetUsers = 10
    @Option(help: "With --fleet: rows of the table the requests read and patch.") var fleetRows = 20_000
    @Option(help: "With --fleet: GETs and PATCHes timed without and with the streams.") var fleetSamples = 200
    @Option(help: "With --fleet: streams a sync-server child process holds (0: skip).") var fleetHeldStreams = 10_000
    @Option(help: "With --fleet: the servers' keep-alive interval in seconds (default: the server's default, 15).")
    var fleetKeepAlive: Double?

    /// The workloads `sync-bench` can run, in the order they run and are printed.
    enum Workload: String, CaseIterable {
        case reference, fullPull = "full-pull", incrementalPull = "incremental-pull", observedPull = "observed-pull"
        case roundTrip = "round-trip", bareInserts = "bare-inserts", pushInserts = "push-inserts", pushUpdates = "push-updates"
        case offlineWrites = "offline-writes", offlineReference = "offline-reference", liveLatency = "live-latency"
        case encrypt, rotate, export, store, keyDerivation = "key-derivation", tpmUnlock = "tpm-unlock"
    }

    /// The database of the server the pushes go to.
    enum PushDatabase: String, ExpressibleByArgument {
        case file, memory
    }

    /// N: `--items`, or a million with `--million`.
    var serverItems: Int { million ? 1_000_000 : items ?? (headline ? 1_000_000 : 100_000) }

    func validate() throws {
        guard (items ?? 1) > 0, operations > 0, runs > 0, pullRuns > 0, pushRuns > 0, storeMegabytes > 0, offlineItems > 0, pulledItems > 0,
            liveSamples > 0,
            (pageSize ?? 1) > 0, (serverPageSize ?? 1) > 0, clients > 0, requestsPerClient > 0, serverPullItems > 0
        else { throw ValidationError("counts must be positive") }
        guard fleetStreams > 0, fleetWriters > 0, fleetUsers > 0, fleetRows > 0, fleetSamples > 0, fleetHeldStreams >= 0,
            (fleetKeepAlive ?? 1) > 0, (fleetKeepAlive ?? 1) <= 3_600
        else {
            throw ValidationError("fleet counts must be positive")
        }
        _ = try selection()
        guard attachmentMegabytes > 0, attachmentFiles > 0, attachmentKilobytes > 0, attachmentStoreMegabytes > 0 else {
            throw ValidationError("attachment sizes and counts must be positive")
        }
        if attachments, headline || workloads != nil || fleet || serverWorkloads {
            throw ValidationError("--attachments runs its own workloads: leave out --headline, --workloads, --fleet and --server-workloads")
        }
        if headline, workloads != nil || fleet || serverWorkloads {
            throw ValidationError("--headline runs its own workloads: leave out --workloads, --fleet and --server-workloads")
        }
    }

    /// The workloads `--workloads` names.
    func selection() throws -> Set<Workload> {
        guard let workloads else { return Set(Workload.allCases) }
        var selected = Set<Workload>()
        for name in workloads.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !name.isEmpty {
            guard let workload = Workload(rawValue: name) else {
                throw ValidationError("unknown workload '\(name)'; choose from \(Workload.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            selected.insert(workload)
        }
        guard !selected.isEmpty else { throw ValidationError("name at least one workload") }
        return selected
    }

    func run() async throws {
        if fleet {
            try await runFleet()
            return
        }
        if serverWorkloads {
            let workloads = ServerWorkloads(
                clients: clients, operationsPerClient: requestsPerClient, pulledItems: serverPullItems, postgresURL: postgresURL)
            let results = try await workloads.run()
            print(json ? String(decoding: try JSONEncoder().encode(results), as: UTF8.self) : ServerWorkloads.report(results, clients: clients))
            return
        }
        let selected = try selection()
        let startLoad = loadAverage
        var records = try await inScratch { scratch in
            if attachments { return try await AttachmentBench(bench: self, scratch: scratch).measure() }
            if headline { return try await Headline.measure(self, in: scratch) }
            return try await measure(selected, in: scratch)
        }
        records.relate()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if headline || attachments {
            let lines = try attachments ? AttachmentBench.lines(records, bench: self) : Headline.lines(records, bench: self)
            if json {
                print(String(decoding: try encoder.encode(HeadlineReport(headline: lines, records: records)), as: UTF8.self))
            } else {
                print((header(startLoad: startLoad) + [Headline.report(lines), "", records.report(header: [])]).joined(separator: "\n"))
            }
        } else if json {
            print(String(decoding: try encoder.encode(records), as: UTF8.self))
        } else {
            print(records.report(header: header(startLoad: startLoad)))
        }
    }

    /// The output of `--headline --json`: the goals' lines and every record they come from.
    struct HeadlineReport: Codable {
        var headline: [HeadlineLine]
        var records: [BenchRecord]
    }

    /// Runs `body` with a scratch directory that is removed afterwards, also when the benchmark
    /// is interrupted (its children are stopped then).
    private func inScratch(_ body: (Scratch) async throws -> [BenchRecord]) async throws -> [BenchRecord] {
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

    private func measure(_ selected: Set<Workload>, in scratch: Scratch) async throws -> [BenchRecord] {
        var records = try await EndToEndBench(bench: self, scratch: scratch, selected: selected).measure()
        if selected.contains(.store) {
            progress("store workloads")
            records += try await StoreBench.measure(self, in: scratch.url)
        }
        if selected.contains(.keyDerivation) {
            progress("key derivation")
            records += try StoreBench.keyDerivation(runs: runs)
        }
        if selected.contains(.tpmUnlock) {
            records += try TPMUnlockBench.measure(runs: runs) { progress($0) }
        }
        return records
    }

    /// A progress line on standard error (standard output carries only the results).
    func progress(_ text: String) {
        FileHandle.standardError.write(Data("sync-bench: \(text)\n".utf8))
    }

    /// The 1-, 5- and 15-minute load averages (`/proc/loadavg`), to judge how quiet the machine was.
    private var loadAverage: String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        let fields = text.split(separator: " ").prefix(3)
        return fields.count == 3 ? fields.joined(separator: " ") : "unknown"
    }

    private func header(startLoad: String) -> [String] {
        var item = BenchItems.userItem(0)
        item[SystemProperty.id] = .string(BenchItems.id(0))
        let user = (try? JSONCoding.encode(item).count) ?? 0
        let number = { (n: Int) in [BenchRecord].number(Double(n), digits: 0) }
        let machine = "\(ProcessInfo.processInfo.activeProcessorCount) cores; load average at the start: \(startLoad), at the end: \(loadAverage)"
        if attachments {
            return [
                "sync-bench --attachments — encrypted stores (SQLCipher with a raw 256-bit key), medians of \(runs) runs; "
                    + "executables from \(BenchTools.ownExecutable.deletingLastPathComponent().path)",
                "peak RSS = the high-water mark of the process that ran the workload; \(machine)", "",
            ]
        }
        return [
            "sync-bench — N = \(number(serverItems)) items (\(user) bytes of JSON each: a GUID id, a 96-character text, a Boolean, "
                + "an integer; plus the system columns), M = \(number(operations)) operations",
            "medians of \(runs) runs (full pull: \(pullRuns), pushes: \(pushRuns)); executables from \(BenchTools.ownExecutable.deletingLastPathComponent().path)",
            "encrypted = SQLCipher with a raw 256-bit key, 4096-byte pages, HMAC on; peak RSS = the high-water mark of the process that ran the workload",
            "pull pages: client \(pageSize.map(String.init) ?? "default"), server \(serverPageSize.map(String.init) ?? "default"); "
                + (headline
                    ? "serial pushes to a server with its tables in memory, batched pushes to the seeded server (SQLite file); "
                    : "pushes to \(pushDatabase == .file ? "the seeded server (SQLite file)" : "a server with its tables in memory"); ")
                + machine,
            "",
        ]
    }
}
