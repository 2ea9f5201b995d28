public import Foundation
import Synchronization

/// The built `sync-server` running as a child process on 127.0.0.1 and a port of its choosing.
public final class ServerProcess: @unchecked Sendable {
    /// The executable (`scripts/test` builds it before running the tests).
    public static let tool = BuiltTool("sync-server")

    /// The base URL the server announced.
    public let url: URL
    /// The one line the server printed when it was ready.
    public let announcement: String
    private let process: SpawnedProcess
    private let stdout: Pipe
    private let stderr: Pipe?
    private let logBuffer = Mutex(Data())

    /// The process id.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Starts `sync-server --port 0 --database <database> --log-level <logLevel> <arguments…>`
    /// and returns once it has announced that it listens.
    ///
    /// - Parameter capturesLog: Whether standard error (the log) is kept for
    ///   ``log(until:)``; otherwise it is discarded.
    public init(database: String = "memory", arguments: [String] = [], logLevel: String = "error", capturesLog: Bool = false) throws {
        process = SpawnedProcess()
        process.executableURL = Self.tool.url
        process.arguments = ["--host", "127.0.0.1", "--port", "0", "--database", database, "--log-level", logLevel] + arguments
        process.environment = Self.tool.baseEnvironment
        stdout = Pipe()
        process.standardOutput = stdout
        stderr = capturesLog ? Pipe() : nil
        process.standardError = stderr ?? FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        announcement = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let prefix = "listening on "
        guard announcement.hasPrefix(prefix), let url = URL(string: String(announcement.dropFirst(prefix.count))) else {
            process.terminate()
            process.waitUntilExit()
            throw ServerProcessError.didNotStart(announcement)
        }
        self.url = url
    }

    /// Starts the server as ``init(database:arguments:logLevel:capturesLog:)`` does, waiting for
    /// its announcement on a thread of its own: a test's cooperative thread stays free meanwhile
    /// (for servers running in the test process, and the other tests).
    public static func start(
        database: String = "memory", arguments: [String] = [], logLevel: String = "error", capturesLog: Bool = false
    ) async throws -> ServerProcess {
        try await onOwnThread { try ServerProcess(database: database, arguments: arguments, logLevel: logLevel, capturesLog: capturesLog) }
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    /// The log (standard error) read so far, once it contains `text` or the process closed it.
    /// Reads on a thread of its own, so the caller's executor stays free.
    ///
    /// - Parameter text: What to wait for.
    /// - Returns: Everything read up to that point.
    public func log(until text: String) async -> String {
        guard let handle = stderr?.fileHandleForReading else { return "" }
        let previous = logBuffer.withLock { $0 }
        return await withCheckedContinuation { continuation in
            Thread {
                var buffer = previous
                while !String(decoding: buffer, as: UTF8.self).contains(text) {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    buffer.append(chunk)
                }
                self.logBuffer.withLock { $0 = buffer }
                continuation.resume(returning: String(decoding: buffer, as: UTF8.self))
            }.start()
        }
    }

    /// Sends `signal` to the process.
    public func send(signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the process to end, without signalling it.
    /// - Returns: Its exit status (a negative signal number when a signal ended it).
    public func waitForExit() -> Int32 {
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : -process.terminationStatus
    }

    /// Sends SIGTERM and waits for the process to end.
    /// - Returns: Its exit status (0 for a graceful shutdown) and whatever else it printed.
    @discardableResult
    public func stop() -> (status: Int32, laterOutput: String) {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let rest = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let status = process.terminationReason == .exit ? process.terminationStatus : -process.terminationStatus
        return (status, rest)
    }
}

/// Why a ``ServerProcess`` could not be started.
public enum ServerProcessError: Error, CustomStringConvertible {
    /// The server exited or printed something else than its `listening on` line.
    case didNotStart(String)

    public var description: String {
        switch self {
        case .didNotStart(let line): return "sync-server did not start (first line: \(line.isEmpty ? "none" : line))"
        }
    }
}
