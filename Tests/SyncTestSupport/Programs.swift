public import Foundation

/// The repository root, found from this file's path.
public let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// What a program run by ``runProgram(_:_:input:environment:)`` produced.
public struct ProgramResult: Sendable {
    public let status: Int32
    /// Standard output, as bytes.
    public let outputBytes: [UInt8]
    /// Standard error, as text.
    public let error: String
    /// Standard output, as text.
    public var output: String { String(decoding: outputBytes, as: UTF8.self) }
}

/// Runs a program with `input` on standard input and waits for it.
/// - Parameter environment: The child's whole environment; `nil` inherits this process's.
@discardableResult
public func runProgram(
    _ executable: String, _ arguments: [String], input: [UInt8], environment: [String: String]? = nil
) throws -> ProgramResult {
    let process = SpawnedProcess()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    // Standard error is drained on its own thread, so a chatty program cannot fill the pipe and
    // stall while this thread waits for its standard output.
    let errorDone = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var err = Data()
    Thread {
        err = stderr.fileHandleForReading.readDataToEndOfFile()
        errorDone.signal()
    }.start()
    stdin.fileHandleForWriting.write(Data(input))
    try stdin.fileHandleForWriting.close()
    let out = stdout.fileHandleForReading.readDataToEndOfFile()
    errorDone.wait()
    process.waitUntilExit()
    return ProgramResult(status: process.terminationStatus, outputBytes: [UInt8](out), error: String(decoding: err, as: UTF8.self))
}

/// Runs a program with the text `input` on standard input and waits for it.
@discardableResult
public func runProgram(
    _ executable: String, _ arguments: [String], input: String = "", environment: [String: String]? = nil
) throws -> ProgramResult {
    try runProgram(executable, arguments, input: Array(input.utf8), environment: environment)
}

/// What a run of a built tool produced.
public struct ToolResult: Sendable, CustomStringConvertible {
    /// The exit code, or `nil` when a signal ended the process.
    public var exitCode: Int32?
    /// The signal that ended the process, if any.
    public var signal: Int32?
    public var stdout: String
    public var stderr: String

    public var description: String {
        "exit \(exitCode.map(String.init) ?? "-") signal \(signal.map(String.init) ?? "-") stdout: \(stdout) stderr: \(stderr)"
    }

    public var wasKilled: Bool { signal == SIGKILL }

    /// The non-empty lines of standard error.
    public var errorLines: [String] { stderr.split(separator: "\n").map(String.init) }
}

/// An executable of this package that `scripts/test` built into `.build/debug`.
public struct BuiltTool: Sendable {
    /// The executable's path.
    public let url: URL
    /// The environment every run starts from (the caller's variables are added to it).
    public let baseEnvironment: [String: String]

    /// The product called `name`. Runs get a minimal environment: no inherited secrets.
    public init(_ name: String, environment: [String: String] = [:]) {
        let candidates = [
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            repositoryRoot.appendingPathComponent(".build/debug"),
        ].map { $0.appendingPathComponent(name) }
        url = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[candidates.count - 1]
        baseEnvironment = ["PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"].merging(environment) { $1 }
    }

    /// Whether the product was built (`scripts/test` builds it before running the tests).
    public var isBuilt: Bool { FileManager.default.isExecutableFile(atPath: url.path) }

    /// Runs the tool and waits for it, blocking this thread.
    ///
    /// - Parameters:
    ///   - environment: Added to ``baseEnvironment`` (a `nil` value removes a variable).
    ///   - stdin: Bytes on standard input (a pipe, so never a terminal).
    ///   - descriptors: Extra open descriptors for the child (`--passphrase-fd N`), each a pipe
    ///     holding the given bytes.
    ///   - prefix: A command to run the tool under (e.g. `setpriv …`).
    public func run(
        _ arguments: [String], environment: [String: String?] = [:], stdin: [UInt8] = [],
        descriptors: [Int32: [UInt8]] = [:], prefix: [String] = []
    ) throws -> ToolResult {
        let child = try start(arguments, environment: environment, stdin: stdin, descriptors: descriptors, prefix: prefix)
        return child.wait()
    }

    /// Runs the tool and waits for it on a thread of its own, so the test's executor stays free
    /// (for a server running in the same process, say).
    public func run(
        _ arguments: [String], environment: [String: String?] = [:], stdin: [UInt8] = []
    ) async throws -> ToolResult {
        let child = try start(arguments, environment: environment, stdin: stdin, descriptors: [:], prefix: [])
        return await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: child.wait()) }.start()
        }
    }

    /// Runs the tool and ends it with `SIGKILL` after `delay` seconds, unless it ended first (a
    /// crash from outside at a random moment); waits on a thread of its own.
    public func run(
        _ arguments: [String], environment: [String: String?] = [:], killAfter delay: Double
    ) async throws -> ToolResult {
        let child = try spawn(arguments, environment: environment, stdin: [], descriptors: [:], prefix: [])
        return await withCheckedContinuation { continuation in
            Thread {
                // The child is not reaped before `wait()`, so its pid cannot be reused meanwhile.
                Thread.sleep(forTimeInterval: max(0, delay))
                kill(child.pid, SIGKILL)
                continuation.resume(returning: child.wait())
            }.start()
        }
    }

    /// Starts the tool and returns at once; the caller waits for it (``RunningTool/wait()``).
    ///
    /// - Parameters: As ``run(_:environment:stdin:descriptors:prefix:)``.
    /// - Returns: The running process.
    public func start(
        _ arguments: [String], environment: [String: String?] = [:], stdin: [UInt8] = [],
        descriptors: [Int32: [UInt8]] = [:], prefix: [String] = []
    ) throws -> RunningTool {
        try spawn(arguments, environment: environment, stdin: stdin, descriptors: descriptors, prefix: prefix)
    }

    private func spawn(
        _ arguments: [String], environment: [String: String?], stdin: [UInt8], descriptors: [Int32: [UInt8]], prefix: [String]
    ) throws -> RunningTool {
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("tool-io-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let child = RunningTool(scratch: scratch)

        var env = baseEnvironment
        for (key, value) in environment { env[key] = value }
        let argv = prefix + [url.path] + arguments

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var pipes: [Int32] = []
        defer { for fd in pipes { close(fd) } }
        func pipe(holding bytes: [UInt8], as target: Int32) throws {
            var fds: [Int32] = [0, 0]
            guard Glibc.pipe(&fds) == 0 else { throw POSIXError(.EMFILE) }
            // Close-on-exec, so children spawned by other tests do not keep them open; dup2 in
            // the child clears the flag on the target descriptor only.
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            pipes += fds
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
                if n <= 0 { break }
                offset += n
            }
            posix_spawn_file_actions_adddup2(&actions, fds[0], target)
        }
        try pipe(holding: stdin, as: 0)
        for (fd, bytes) in descriptors { try pipe(holding: bytes, as: fd) }
        posix_spawn_file_actions_addopen(&actions, 1, child.outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, child.errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // Nothing else of this process reaches the child (other tests' pipes and databases).
        try SpawnedProcess.closeFrom(max(2, descriptors.keys.max() ?? 2) + 1, in: &actions)

        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in cArgs + cEnv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, nil, cArgs, cEnv)
        guard rc == 0 else {
            child.removeScratch()
            throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EINVAL)
        }
        child.pid = pid
        return child
    }
}
