import ArgumentParser
import Foundation
import SyncKeys
import SyncSQL
import SyncSQLite
@_spi(Testing) import SyncStore
import Synchronization

/// What one run of an external tool measured (``MeasureTool``).
struct ToolReport: Codable, Sendable {
    /// Wall-clock seconds from spawning the tool to its exit.
    var seconds: Double
    /// The tool's exit status (a signal counts as 128 + its number).
    var status: Int32
    /// `ru_maxrss` of the tool from `wait4`, in bytes.
    var peakRSSBytes: Int
    /// The launcher's own peak when it spawned the tool: a tool that executes inherits it as
    /// its high-water mark, so a tool peak at or below it is only an upper bound.
    var launcherRSSBytes: Int
}

/// `sync-bench measure-tool --log PATH -- TOOL ARGS…`: runs TOOL as a child of this small
/// process (so the tool's `ru_maxrss` is not the benchmark's), its output into PATH, and prints a
/// ``ToolReport``.
struct MeasureTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "measure-tool", abstract: "Runs a tool and reports its time and peak memory (used by sync-bench itself).",
        shouldDisplay: false)

    @Option var log: String
    @Argument(parsing: .postTerminator) var command: [String]

    func run() throws {
        guard let tool = command.first else { throw ValidationError("give the tool to run after --") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let arguments = command.map { strdup($0) } + [nil]
        let environment = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in arguments + environment { free(pointer) } }
        // The tool starts with the default SIGINT and SIGTERM actions, and this process passes
        // either signal on to it, so an interrupted benchmark leaves no tool running.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGINT, SIGTERM] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
        let child = Mutex<pid_t>(0)
        let forwarders = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { child.withLock { if $0 > 0 { kill($0, number) } } }
            source.resume()
            return source
        }
        defer { for source in forwarders { source.cancel() } }
        let launcher = ProcessStatistics.ownPeakResidentBytes
        let started = ContinuousClock.now
        var pid: pid_t = 0
        let rc = child.withLock { spawned in
            let rc = posix_spawn(&pid, tool, &actions, &attributes, arguments, environment)
            spawned = pid
            return rc
        }
        guard rc == 0 else { throw BenchError("cannot run \(tool): \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let seconds = (ContinuousClock.now - started).seconds
        let signalled = status & 0x7F
        #if os(Linux)
        let peak = Int(usage.ru_maxrss) * 1024
        #else
        let peak = Int(usage.ru_maxrss)
        #endif
        let report = ToolReport(
            seconds: seconds, status: signalled == 0 ? (status >> 8) & 0xFF : 128 + signalled, peakRSSBytes: peak, launcherRSSBytes: launcher)
        print(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
    }
}

/// `sync-keys encrypt` and `sync-keys rotate` on a store of about `megabytes` MB, through the
/// executable, the passphrase in a 0600 file (never in argv).
struct KeyToolBench {
    let megabytes: Int
    let runs: Int
    let scratch: Scratch

    /// One measured run: the tool's report and the database size it worked on.
    struct Run {
        var report: ToolReport
        var bytes: Int
    }

    /// What ``measure(encrypt:rotate:export:progress:)`` measured.
    struct Measured {
        /// The runs of `encrypt` (empty when not selected) and of `rotate`.
        var encrypt: [Run] = [], rotate: [Run] = []
        /// The reference runs: `sqlcipher_export` of the plain store (beside `encrypt`) and of
        /// the encrypted store (beside `rotate`) into a new keyed database.
        var exportPlain: [Run] = [], exportEncrypted: [Run] = []
        /// The rows of the store.
        var rows = 0
    }

    /// Runs the selected workloads; `encrypt` always runs once, since rotation needs an
    /// encrypted store. With `export`, each run of a tool is followed by its reference on the
    /// same store (the plain one for `encrypt`, the encrypted one for `rotate`), so the two meet
    /// the machine in the same minute.
    func measure(encrypt: Bool, rotate: Bool, export: Bool, progress: (String) -> Void) async throws -> Measured {
        let tool = try BenchTools.locate("sync-keys")
        let passphrase = scratch.path("passphrase")
        // A random passphrase of 48 hex digits, written to the file and wiped here.
        var secret = KeyHandOver.text(of: SecretBytes(BenchBytes.random(24)))
        defer { for i in secret.indices { secret[i] = 0 } }
        guard FileManager.default.createFile(atPath: passphrase, contents: Data(secret), attributes: [.posixPermissions: 0o600]) else {
            throw BenchError("cannot write \(passphrase)")
        }
        progress("building a plain store of \(megabytes) MB")
        let source = URL(fileURLWithPath: scratch.path("keys-source.db"))
        var measured = Measured()
        measured.rows = try await Self.fillPlainStore(at: source, megabytes: megabytes)
        let sourceBytes = try Self.size(of: source)

        var store: URL?
        for run in 0..<(encrypt || export ? runs : 1) {
            progress("sync-keys encrypt, run \(run + 1)")
            let copy = URL(fileURLWithPath: scratch.path("keys-\(run).db"))
            try FileManager.default.copyItem(at: source, to: copy)
            let report = try await runTool(tool, ["encrypt", "--store", copy.path, "--passphrase-file", passphrase])
            measured.encrypt.append(Run(report: report, bytes: sourceBytes))
            if let store { Self.removeStore(at: store) }
            store = copy
            if export {
                progress("sqlcipher_export of the plain store, run \(run + 1)")
                measured.exportPlain.append(try await exportReference(of: source, key: nil))
            }
        }
        if let store, rotate || export {
            for run in 0..<runs {
                if rotate {
                    progress("sync-keys rotate, run \(run + 1)")
                    let bytes = try Self.size(of: store)
                    let report = try await runTool(tool, ["rotate", "--store", store.path, "--passphrase-file", passphrase])
                    measured.rotate.append(Run(report: report, bytes: bytes))
                }
                if export {
                    progress("sqlcipher_export of the encrypted store, run \(run + 1)")
                    // The data key the envelope holds now (a rotation replaced it), unlocked
                    // outside the measured part.
                    let phrase = try Passphrase.normalized(SecretBytes(Array(secret.prefix { $0 != 0x0A })))
                    let key = try KeyEnvelope.read(from: KeyEnvelope.url(forDatabase: store)).unlock(passphrase: phrase)
                    measured.exportEncrypted.append(try await exportReference(of: store, key: key))
                }
            }
        }
        if let store { Self.removeStore(at: store) }
        Self.removeStore(at: source)
        try? FileManager.default.removeItem(atPath: passphrase)
        if !encrypt { measured.encrypt = [] }
        return measured
    }

    /// One run of the export reference (``ChildWorkload/exportReference(at:encryption:)``) of
    /// the database at `url` in a child process; the new database is removed afterwards.
    private func exportReference(of url: URL, key: SecretBytes?) async throws -> Run {
        let target = scratch.path("export.db")
        defer { Self.removeStore(at: URL(fileURLWithPath: target)) }
        var arguments = ["child-workload", ClientWorkload.export.rawValue, "--store", url.path, "--target", target, "--count", "0"]
        if key != nil { arguments.append("--encrypted") }
        var input = key.map { KeyHandOver.text(of: $0) } ?? []
        defer { for i in input.indices { input[i] = 0 } }
        let output = try await ChildRunner.run(BenchTools.ownExecutable, arguments, input: input, in: scratch)
        let report = try JSONDecoder().decode(ChildReport.self, from: output)
        return Run(
            report: ToolReport(seconds: report.seconds, status: 0, peakRSSBytes: report.peakRSSBytes, launcherRSSBytes: 0), bytes: report.items)
    }

    func runTool(_ tool: URL, _ arguments: [String]) async throws -> ToolReport {
        let log = scratch.path("sync-keys.log")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let output = try await ChildRunner.run(
            BenchTools.ownExecutable, ["measure-tool", "--log", log, "--", tool.path] + arguments, in: scratch)
        let report = try JSONDecoder().decode(ToolReport.self, from: output)
        guard report.status == 0 else {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw BenchError("sync-keys \(arguments[0]) failed (status \(report.status)): \(text.suffix(800))")
        }
        return report
    }

    /// Creates a plain store and fills its pulled-items table straight through its connection
    /// (one prepared statement, transactions of 5,000 rows) until it holds `megabytes` MB.
    /// - Returns: The rows written.
    static func fillPlainStore(at url: URL, megabytes: Int) async throws -> Int {
        let store = try await SQLiteStore.open(at: url, encryption: .none, options: StoreOptions(createIfMissing: true))
        do {
            let target = megabytes * 1_000_000
            let rows = try await store.withConnection { connection in
                try connection.execute(DirectInsert.createTable)
                let chunk = 5_000
                var written = 0
                let firstMillisecond = Int64(Date().timeIntervalSince1970 * 1000) - 100_000_000
                while (try connection.scalar("PRAGMA page_count")?.integerValue ?? 0) * Int64(Connection.pageSize) < target {
                    try DirectInsert.insert(DirectInsert.rows(written..<(written + chunk), firstMillisecond: firstMillisecond), into: connection)
                    written += chunk
                }
                return written
            }
            try await store.close()
            return rows
        } catch {
            try? await store.close()
            throw error
        }
    }

    static func size(of url: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Removes a store's database and every file beside it.
    static func removeStore(at url: URL) {
        for suffix in ["", "-wal", "-shm", "-journal", ".keys", ".lock"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }
}
