import Foundation
public import SyncKeyMaintenance
import Synchronization

/// A **test hook**: when the environment variable `CIPHERSYNC_FAULT_STEP` names a step that a
/// tool reports, the process kills itself with `SIGKILL` right when that step is reached, so
/// tests can prove that a crash at that point loses nothing.
///
/// Values: a step name, or `name:N` for the N-th time the step is reached (N ≥ 1; a bare name is
/// the first time). The key tools (`sync-keys rotate`, `encrypt`, `add-tpm-slot`, `remove-slot`,
/// `shred`) report the `KeyMaintenanceStep` raw values (`renamed`, `envelope-rotating`,
/// `tpm-sealed`, …) and `progress` for each
/// copy-progress report; `todo` reports the sync engine's checkpoints (`push-claimed`,
/// `push-sent`, `pull-page`). The hook cannot weaken security: all it can do is end the process,
/// which anyone who can set the environment can already do; it reads no secret and changes no
/// file.
@_spi(Testing)
public struct FaultInjection: Sendable {
    /// The environment variable the hook reads.
    public static let environmentVariable = "CIPHERSYNC_FAULT_STEP"

    /// The step names of the key-maintenance procedures.
    public static let keyMaintenanceSteps = KeyMaintenanceStep.allCases.map(\.rawValue) + ["progress"]

    private let step: String
    private let occurrence: Int
    private let counter = Counter()

    /// How often the step was reached; a class so that copies of the hook share it.
    private final class Counter: Sendable {
        let reached = Mutex(0)
    }

    /// The hook the environment asks for among the key-maintenance steps, or `nil` (the normal
    /// case).
    ///
    /// - Throws: ``CLIError`` (usage) when the variable is set to something unknown.
    public static func fromEnvironment() throws -> FaultInjection? {
        try fromEnvironment(steps: keyMaintenanceSteps)
    }

    /// The hook the environment asks for among `steps`, or `nil` (the normal case).
    ///
    /// - Parameter steps: the step names the tool reports.
    /// - Throws: ``CLIError`` (usage) when the variable is set to something unknown.
    public static func fromEnvironment(steps: [String]) throws -> FaultInjection? {
        guard let value = ProcessInfo.processInfo.environment[environmentVariable], !value.isEmpty else { return nil }
        let parts = value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let occurrence = parts.count == 2 ? Int(parts[1]) : 1
        guard let occurrence, occurrence >= 1, steps.contains(parts[0]) else {
            throw CLIError.usage("\(environmentVariable)=\(value) is not a known step.")
        }
        return FaultInjection(step: parts[0], occurrence: occurrence)
    }

    private init(step: String, occurrence: Int) {
        self.step = step
        self.occurrence = occurrence
    }

    /// Kills the process if `event` is the one asked for.
    public func observe(_ event: KeyMaintenanceEvent) {
        switch event {
        case .step(let step): observe(step: step.rawValue)
        case .progress: observe(step: "progress")
        }
    }

    /// Kills the process if reaching `name` now is the occurrence asked for.
    /// - Parameter name: the step just reached.
    public func observe(step name: String) {
        guard name == step else { return }
        let count = counter.reached.withLock { count -> Int in
            count += 1
            return count
        }
        if count == occurrence { kill(getpid(), SIGKILL) }
    }
}
