public import Foundation
public import SyncKeyMaintenance

/// A **test hook**: when the environment variable `CIPHERSYNC_FAULT_STEP` names a step of a key
/// procedure, the process kills itself with `SIGKILL` right when that step is reported, so tests
/// can prove that a crash at that point loses nothing.
///
/// Values: a `KeyMaintenanceStep` raw value (`renamed`, `envelope-rotating`, …), or
/// `progress:N` for the N-th copy-progress report (N ≥ 1). The hook cannot weaken security: all
/// it can do is end the process, which anyone who can set the environment can already do; it
/// reads no secret and changes no file.
public struct FaultInjection: Sendable {
    /// The environment variable the hook reads.
    public static let environmentVariable = "CIPHERSYNC_FAULT_STEP"

    private enum Trigger: Sendable, Equatable {
        case step(KeyMaintenanceStep)
        case progress(Int)
    }

    private let trigger: Trigger

    /// The hook the environment asks for, or `nil` (the normal case).
    ///
    /// - Throws: ``CLIError`` (usage) when the variable is set to something unknown.
    public static func fromEnvironment() throws -> FaultInjection? {
        guard let value = ProcessInfo.processInfo.environment[environmentVariable], !value.isEmpty else { return nil }
        if value.hasPrefix("progress:"), let count = Int(value.dropFirst("progress:".count)), count >= 1 {
            return FaultInjection(trigger: .progress(count))
        }
        guard let step = KeyMaintenanceStep(rawValue: value) else {
            throw CLIError.usage("\(environmentVariable)=\(value) is not a known step.")
        }
        return FaultInjection(trigger: .step(step))
    }

    private final class Counter: @unchecked Sendable {
        // Touched only from the thread running the procedure.
        var progressEvents = 0
    }

    private let counter = Counter()

    /// Kills the process if `event` is the one asked for.
    public func observe(_ event: KeyMaintenanceEvent) {
        switch (trigger, event) {
        case (.step(let wanted), .step(let step)) where wanted == step:
            kill(getpid(), SIGKILL)
        case (.progress(let wanted), .progress):
            counter.progressEvents += 1
            if counter.progressEvents == wanted { kill(getpid(), SIGKILL) }
        default:
            break
        }
    }
}
