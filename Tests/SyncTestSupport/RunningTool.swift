public import Foundation

/// A tool started by ``BuiltTool/start(_:environment:stdin:descriptors:prefix:)``, its standard
/// output and error going to two files in a scratch directory (removed once it has been waited for).
public final class RunningTool: @unchecked Sendable {
    // `pid` is set once, by the spawning thread, before the value is shared; `reaped` is used by
    // one waiting thread at a time.
    let scratch: URL
    /// The process id.
    public internal(set) var pid: pid_t = 0
    private var reaped: Int32?

    init(scratch: URL) { self.scratch = scratch }

    var outPath: String { scratch.appendingPathComponent("out").path }
    var errPath: String { scratch.appendingPathComponent("err").path }

    func removeScratch() { try? FileManager.default.removeItem(at: scratch) }

    /// Waits until the process stops (`SIGSTOP`, e.g. a tool's pause hook) or ends.
    ///
    /// - Returns: `nil` when it stopped; its result when it ended instead.
    public func waitUntilStopped() -> ToolResult? {
        var status: Int32 = 0
        while waitpid(pid, &status, WUNTRACED) < 0 && errno == EINTR {}
        if status & 0xFF == 0x7F { return nil }
        reaped = status
        return wait()
    }

    /// Lets a stopped process go on (`SIGCONT`).
    public func resume() {
        Glibc.kill(pid, SIGCONT)
    }

    /// Ends the process at once (`SIGKILL`).
    public func kill() {
        Glibc.kill(pid, SIGKILL)
    }

    /// Waits for the process to end (blocking this thread) and collects what it wrote.
    public func wait() -> ToolResult {
        defer { removeScratch() }
        var status: Int32 = 0
        if let reaped {
            status = reaped
        } else {
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            reaped = status
        }
        let stdout = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        let signal = status & 0x7F
        if signal == 0 {
            return ToolResult(exitCode: (status >> 8) & 0xFF, signal: nil, stdout: stdout, stderr: stderr)
        }
        return ToolResult(exitCode: nil, signal: signal, stdout: stdout, stderr: stderr)
    }
}
