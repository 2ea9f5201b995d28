public import Foundation
import Synchronization

/// A child process started with `posix_spawn`: the part of Foundation's `Process` the tests
/// use, under the same names.
///
/// Foundation's `Process.run()` on Linux lists `/proc/self/fd` to close the parent's descriptors
/// in the child, and copies each directory entry's whole 256-byte name field: with more than
/// about 1,350 descriptors open (a test process running hundreds of tests over stores at once),
/// that copy can read past the end of glibc's directory buffer and crash the test process. Here
/// the child's descriptors above 2 are closed by `posix_spawn_file_actions_addclosefrom_np`,
/// without reading the directory.
public final class SpawnedProcess: @unchecked Sendable {
    /// How the process ended.
    public enum TerminationReason: Sendable {
        case exit, uncaughtSignal
    }

    /// The program to run.
    public var executableURL: URL?
    /// Its arguments (without the program's own name).
    public var arguments: [String] = []
    /// Its whole environment; `nil` inherits this process's.
    public var environment: [String: String]?
    /// Standard input, output and error: a `Pipe` or a `FileHandle`; `nil` inherits this
    /// process's.
    public var standardInput: Any?
    public var standardOutput: Any?
    public var standardError: Any?

    private struct State {
        var pid: pid_t = 0
        /// The raw `waitpid` status, once the process was reaped.
        var status: Int32?
    }

    private let state = Mutex(State())

    public init() {}

    /// The process id (0 before ``run()``).
    public var processIdentifier: Int32 { state.withLock { $0.pid } }

    /// Starts the program. This process's copies of the pipe ends given to the child are closed,
    /// as `Process` does.
    public func run() throws {
        guard let executableURL else { throw POSIXError(.ENOENT) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let streams = [standardInput, standardOutput, standardError]
        for (target, stream) in streams.enumerated() {
            if let fd = Self.childDescriptor(stream, isInput: target == 0) {
                posix_spawn_file_actions_adddup2(&actions, fd, Int32(target))
            }
        }
        try Self.closeFrom(3, in: &actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group, as `Process` does; signals restored to their defaults.
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = [executableURL.path] + arguments
        let env = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup($0) } + [nil]
        defer { for pointer in cArgs + cEnv { free(pointer) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executableURL.path, &actions, &attributes, cArgs, cEnv)
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EINVAL) }
        state.withLock { $0.pid = pid }
        for (target, stream) in streams.enumerated() {
            if let pipe = stream as? Pipe {
                try? (target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting).close()
            }
        }
    }

    /// Whether the process has not ended yet (it is reaped once it has).
    public var isRunning: Bool {
        state.withLock { state in
            guard state.pid > 0, state.status == nil else { return false }
            var status: Int32 = 0
            if waitpid(state.pid, &status, WNOHANG) == state.pid { state.status = status }
            return state.status == nil
        }
    }

    /// Blocks this thread until the process has ended.
    public func waitUntilExit() {
        let pid = state.withLock { $0.status == nil ? $0.pid : 0 }
        guard pid > 0 else { return }
        var status: Int32 = 0
        var reaped: pid_t
        repeat { reaped = waitpid(pid, &status, 0) } while reaped == -1 && errno == EINTR
        state.withLock { state in
            if state.status == nil { state.status = reaped == pid ? status : 0 }
        }
    }

    /// The exit code, or the signal that ended the process (call after ``waitUntilExit()``).
    public var terminationStatus: Int32 {
        let status = state.withLock { $0.status } ?? 0
        return status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
    }

    /// Whether the process exited or a signal ended it (call after ``waitUntilExit()``).
    public var terminationReason: TerminationReason {
        let status = state.withLock { $0.status } ?? 0
        return status & 0x7f == 0 ? .exit : .uncaughtSignal
    }

    /// Sends `SIGTERM` (unless the process was already reaped, so a reused pid is never hit).
    public func terminate() {
        signal(SIGTERM)
    }

    /// Sends `SIGINT`.
    public func interrupt() {
        signal(SIGINT)
    }

    private func signal(_ number: Int32) {
        state.withLock { state in
            if state.pid > 0, state.status == nil { kill(state.pid, number) }
        }
    }

    /// The descriptor the child gets for a stream: a pipe's end, or a file handle's.
    private static func childDescriptor(_ stream: Any?, isInput: Bool) -> Int32? {
        if let pipe = stream as? Pipe {
            return isInput ? pipe.fileHandleForReading.fileDescriptor : pipe.fileHandleForWriting.fileDescriptor
        }
        return (stream as? FileHandle)?.fileDescriptor
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; not in Swift's view of
    /// `spawn.h`), found at run time.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Closes every descriptor from `first` up in the child.
    static func closeFrom(_ first: Int32, in actions: inout posix_spawn_file_actions_t) throws {
        if let addCloseFrom {
            let rc = addCloseFrom(&actions, first)
            guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EINVAL) }
            return
        }
        // An older glibc: the open descriptors, listed by name (never a copied dirent).
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(name), fd >= first, fcntl(fd, F_GETFD) != -1 {
                posix_spawn_file_actions_addclose(&actions, fd)
            }
        }
    }
}
