import Foundation
import Testing

/// What a run of the built `sync-keys` produced.
struct CLIResult: CustomStringConvertible {
    /// The exit code, or `nil` when a signal ended the process.
    var exitCode: Int32?
    /// The signal that ended the process, if any.
    var signal: Int32?
    var stdout: String
    var stderr: String

    var description: String {
        "exit \(exitCode.map(String.init) ?? "-") signal \(signal.map(String.init) ?? "-") stdout: \(stdout) stderr: \(stderr)"
    }

    var wasKilled: Bool { signal == SIGKILL }
}

/// Runs the `sync-keys` executable that `swift build --build-tests` put in the build products
/// directory, next to the test bundle.
enum CLI {
    /// The repository root, from this file's path.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The built executable.
    static let executable: URL = {
        let products = [
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            repositoryRoot.appendingPathComponent(".build/debug"),
        ]
        for directory in products {
            let candidate = directory.appendingPathComponent("sync-keys")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return repositoryRoot.appendingPathComponent(".build/debug/sync-keys")
    }()

    /// The environment every run gets: no inherited secrets, the insecure test profile allowed.
    static let baseEnvironment: [String: String] = [
        "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "CIPHERSYNC_ALLOW_INSECURE_PROFILE": "1",
    ]

    /// Runs `sync-keys arguments…` and waits for it.
    ///
    /// - Parameters:
    ///   - environment: Added to ``baseEnvironment`` (a `nil` value removes a variable).
    ///   - stdin: Bytes on standard input (a pipe, so never a terminal).
    ///   - descriptors: Extra open descriptors for the child (`--passphrase-fd N`), each a pipe
    ///     holding the given bytes.
    ///   - prefix: A command to run the tool under (e.g. `setpriv …`).
    static func run(
        _ arguments: [String], environment: [String: String?] = [:], stdin: [UInt8] = [],
        descriptors: [Int32: [UInt8]] = [:], prefix: [String] = []
    ) throws -> CLIResult {
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("cli-io-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outPath = scratch.appendingPathComponent("out").path
        let errPath = scratch.appendingPathComponent("err").path

        var env = baseEnvironment
        for (key, value) in environment { env[key] = value }
        let argv = prefix + [executable.path] + arguments

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
            bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = write(fds[1], raw.baseAddress! + offset, raw.count - offset)
                    if n <= 0 { break }
                    offset += n
                }
            }
            posix_spawn_file_actions_adddup2(&actions, fds[0], target)
        }
        try pipe(holding: stdin, as: 0)
        for (fd, bytes) in descriptors { try pipe(holding: bytes, as: fd) }
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in cArgs + cEnv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, nil, cArgs, cEnv)
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EINVAL) }
        for fd in pipes { close(fd) }
        pipes.removeAll()
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let stdout = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        let signal = status & 0x7F
        if signal == 0 {
            return CLIResult(exitCode: (status >> 8) & 0xFF, signal: nil, stdout: stdout, stderr: stderr)
        }
        return CLIResult(exitCode: nil, signal: signal, stdout: stdout, stderr: stderr)
    }
}
