import Foundation

/// A **test hook**: when the environment variable `CIPHERSYNC_PAUSE_STEP` names a point of a
/// tool's run, the process stops itself with `SIGSTOP` there, so a test can examine it (take a core
/// dump and search it for secrets) at a known moment without sleeping; `SIGCONT` lets it go on.
///
/// The one point is `closed`: the command has finished its work (its store is closed and its lock
/// released, and the secrets it read have been dropped) and the tool is about to exit. Like
/// `FaultInjection`, the hook cannot weaken security: it reads no secret and changes no file, and
/// stopping a process is something anyone who can set its environment can already do.
enum PauseInjection {
    /// The environment variable the hook reads.
    static let environmentVariable = "CIPHERSYNC_PAUSE_STEP"

    /// Where a tool can pause.
    enum Point: String, Sendable, CaseIterable {
        /// The command's work is done and its store closed; the process is about to exit.
        case closed
    }

    /// The point the environment asks for, or `nil` (the normal case).
    ///
    /// - Throws: ``CLIError`` (usage) when the variable names no known point.
    static func fromEnvironment() throws -> Point? {
        guard let value = ProcessInfo.processInfo.environment[environmentVariable], !value.isEmpty else { return nil }
        guard let point = Point(rawValue: value) else {
            throw CLIError.usage("\(environmentVariable)=\(value) is not a known pause point.")
        }
        return point
    }

    /// Stops the process (every thread) until it is continued.
    ///
    /// The signal goes to the calling thread (`raise`), which stops before the call returns; sent
    /// to the process (`kill(getpid(), …)`) it may be taken by another thread while this one
    /// runs on to `exit`, which cancels the stop.
    static func pause() {
        raise(SIGSTOP)
    }
}
