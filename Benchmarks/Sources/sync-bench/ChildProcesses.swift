import Foundation
import SyncKeys
import Synchronization

/// A failure of the benchmark itself (a missing tool, a child that failed, a wrong count).
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The benchmark's scratch directory (mode 0700 under `TMPDIR`), removed at the end, also when
/// the benchmark is interrupted.
struct Scratch: Sendable {
    let url: URL

    init() throws {
        url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("sync-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        ChildRegistry.shared.setScratch(url)
    }

    /// The path of `name` inside the directory.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func remove() {
        try? FileManager.default.removeItem(at: url)
        ChildRegistry.shared.setScratch(nil)
    }
}

/// The child processes running now and the scratch directory: on SIGINT or SIGTERM the
/// children are stopped and the directory removed before the benchmark exits.
final class ChildRegistry: Sendable {
    static let shared = ChildRegistry()

    private struct State {
        var children: Set<pid_t> = []
        var scratch: URL?
        var sources: [any DispatchSourceSignal] = []
        var isInterrupted = false
    }
    private let state = Mutex(State())

    func add(_ pid: pid_t) { state.withLock { _ = $0.children.insert(pid) } }
    func remove(_ pid: pid_t) { state.withLock { _ = $0.children.remove(pid) } }
    func setScratch(_ url: URL?) { state.withLock { $0.scratch = url } }

    /// Installs the SIGINT and SIGTERM handlers (once, in the benchmark's main process).
    func installSignalHandlers() {
        state.withLock { state in
            guard state.sources.isEmpty else { return }
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { [self] in interrupted(by: number) }
                source.resume()
                state.sources.append(source)
            }
        }
    }

    /// Stops the children, removes the scratch directory and exits.
    private func interrupted(by number: Int32) -> Never {
        let (children, scratch) = state.withLock {
            $0.isInterrupted = true
            return ($0.children, $0.scratch)
        }
        for pid in children { kill(pid, SIGTERM) }
        // Foundation reaps its children itself: wait until each has ended, five seconds at most.
        let deadline = ContinuousClock.now + .seconds(5)
        while children.contains(where: Self.isRunning), ContinuousClock.now < deadline { usleep(10_000) }
        for pid in children where Self.isRunning(pid) { kill(pid, SIGKILL) }
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
        exit(128 + number)
    }

    /// After a failure: if the failure is an interruption's doing (a child stopped by the
    /// handler), waits for the handler to finish cleaning up and end the process.
    func waitIfInterrupted() {
        guard state.withLock({ $0.isInterrupted }) else { return }
        for _ in 0..<1_000 { usleep(10_000) }
    }

    /// Whether process `pid` exists and has not ended (a zombie has).
    private static func isRunning(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else {
            return true
        }
        return !stat[stat.index(after: close)...].hasPrefix(" Z")
    }
}

/// Where the benchmark finds the executables it runs: beside its own binary, so a release
/// `sync-bench` runs the release `sync-server` and `sync-keys` of the same build.
enum BenchTools {
    /// This executable.
    static var ownExecutable: URL {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: path)
        }
        return Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
    }

    /// The executable `name` of this build.
    /// - Throws: ``BenchError`` naming the build command when it is missing.
    static func locate(_ name: String) throws -> URL {
        let directory = ownExecutable.deletingLastPathComponent()
        let url = directory.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw BenchError(
                """
                \(name) is missing from \(directory.path); build it into the scratch directory of sync-bench: \
                bash scripts/bench-build --release (in the root package's directory) builds the three together
                """)
        }
        return url
    }
}

/// CPU time and memory of processes, from `/proc` (Linux) or `getrusage`.
enum ProcessStatistics {
    #if os(Linux)
    private static let rusageSelf = __rusage_who_t(RUSAGE_SELF.rawValue)
    #else
    private static let rusageSelf = RUSAGE_SELF
    #endif

    /// User plus system CPU seconds of process `pid` so far, or `nil` where `/proc` is missing.
    static func cpuSeconds(of pid: pid_t) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After the command name: state is field 3 of the line, utime 14 and stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// User plus system CPU seconds of this process so far.
    static var ownCPUSeconds: Double {
        var usage = rusage()
        getrusage(rusageSelf, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The resident set of process `pid` now, in bytes (`VmRSS`), or `nil` where `/proc` is missing.
    static func residentBytes(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    /// The peak resident set of this process's own address space, in bytes: `VmHWM` on Linux.
    /// (`getrusage`'s `ru_maxrss` would also count the parent's memory, which a spawned child
    /// inherits as its high-water mark when it executes; it is the fallback elsewhere.)
    static var ownPeakResidentBytes: Int {
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
        {
            return kilobytes * 1024
        }
        var usage = rusage()
        getrusage(rusageSelf, &usage)
        #if os(Linux)
        return Int(usage.ru_maxrss) * 1024
        #else
        return Int(usage.ru_maxrss)
        #endif
    }
}

/// Runs this executable (or another one) as a child process and returns what it printed.
enum ChildRunner {
    /// Runs `executable arguments…` with `input` on standard input and waits for it.
    /// - Returns: Its standard output.
    /// - Throws: ``BenchError`` with the end of its standard error when it fails.
    static func run(_ executable: URL, _ arguments: [String], input: [UInt8] = [], in scratch: Scratch) async throws -> Data {
        let name = UUID().uuidString
        let out = scratch.url.appendingPathComponent("\(name).out"), err = scratch.url.appendingPathComponent("\(name).err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil, attributes: [.posixPermissions: 0o600])
        _ = FileManager.default.createFile(atPath: err.path, contents: nil, attributes: [.posixPermissions: 0o600])
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        let (exits, exited) = AsyncStream<Process>.makeStream()
        process.terminationHandler = {
            exited.yield($0)
            exited.finish()
        }
        try process.run()
        ChildRegistry.shared.add(process.processIdentifier)
        let writer = stdin.fileHandleForWriting
        var offset = 0
        while offset < input.count {
            let n = input[offset...].withUnsafeBytes { write(writer.fileDescriptor, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            offset += n
        }
        try writer.close()
        for await _ in exits {}
        ChildRegistry.shared.remove(process.processIdentifier)
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let message = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
            let how = process.terminationReason == .exit ? "exit status \(process.terminationStatus)" : "signal \(process.terminationStatus)"
            throw BenchError("\(executable.lastPathComponent) \(arguments.first ?? "") failed (\(how)): \(message.suffix(800))")
        }
        return try Data(contentsOf: out)
    }
}

/// A raw data key handed to a child on standard input as 64 hex digits (never in argv).
enum KeyHandOver {
    /// The hex text of `key` and a newline; the caller wipes it after use.
    static func text(of key: SecretBytes) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(key.count * 2 + 1)
        key.withUnsafeBytes { bytes in
            for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]] }
        }
        return text + [0x0A]
    }

    /// Reads the key from standard input.
    /// - Throws: ``BenchError`` when it is not 64 hex digits.
    static func readFromStandardInput() throws -> SecretBytes {
        var input = [UInt8](repeating: 0, count: 128)
        defer { for i in input.indices { input[i] = 0 } }
        var count = 0
        while count < input.count {
            let n = input[count...].withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            count += n
        }
        let digits = input[..<count].prefix { $0 != 0x0A }
        guard digits.count == 64 else { throw BenchError("expected a 32-byte key as 64 hex digits on standard input") }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        var key = [UInt8](repeating: 0, count: 32)
        for i in 0..<32 {
            guard let high = value(digits[digits.startIndex + 2 * i]), let low = value(digits[digits.startIndex + 2 * i + 1]) else {
                throw BenchError("expected a 32-byte key as 64 hex digits on standard input")
            }
            key[i] = high << 4 | low
        }
        return SecretBytes(wiping: &key)
    }
}
