public import ArgumentParser
import Foundation
import SyncKeyMaintenance
import SyncKeys

/// Runs a tool's root command with CipherSync's conventions; call it from the tool's top-level code
/// (`main.swift`), which must not `await` anything itself: the process then still has one thread
/// when this starts.
///
/// 1. Secret environment variables are moved into ``SecretEnvironment/process`` before anything
///    else, while the process has one thread (``SecretEnvironment/captureProcessEnvironment(_:)``),
///    so no other thread reads the environment while it changes.
/// 2. `SIGPIPE` and `SIGXFSZ` are ignored, so a closed pipe or a file-size limit becomes an error
///    the tool reports instead of a silent death.
/// 3. The command line is parsed; help exits 0, a usage error prints the usage and exits 2
///    (ArgumentParser's default would be 64).
/// 4. The command runs (in a task; the main thread serves the main queue meanwhile); an error
///    becomes one line `<tool>: <message>` on standard error and the exit code of
///    ``ExitStatus/for(_:)``.
/// 5. Secrets captured from the environment and never used are wiped; with the test hook
///    `PauseInjection` (`CIPHERSYNC_PAUSE_STEP`) the process then stops itself, and it exits.
public enum CommandRunner {
    /// Parses `arguments` (the command line without the program name), runs `Root`, then exits
    /// the process.
    public static func main<Root: ParsableCommand>(
        _ root: Root.Type, toolName: String, arguments: [String] = Array(CommandLine.arguments.dropFirst())
    ) -> Never {
        SecretEnvironment.captureProcessEnvironment()
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)
        Task {
            let status: ExitStatus
            let pause: PauseInjection.Point?
            do {
                pause = try PauseInjection.fromEnvironment()
                status = await run(Root.self, toolName: toolName, arguments: arguments)
            } catch {
                pause = nil
                status = report(error, root: Root.self, toolName: toolName)
            }
            SecretEnvironment.process.discardAll()
            if pause == .closed { PauseInjection.pause() }
            exit(status.rawValue)
        }
        dispatchMain()
    }

    /// Parses and runs the command; every secret it read is dropped when this returns.
    private static func run<Root: ParsableCommand>(_ root: Root.Type, toolName: String, arguments: [String]) async -> ExitStatus {
        do {
            var command = try Root.parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return .ok
        } catch {
            return report(error, root: Root.self, toolName: toolName)
        }
    }

    /// Prints what `error` means and returns the exit status.
    static func report<Root: ParsableCommand>(_ error: any Error, root: Root.Type, toolName: String) -> ExitStatus {
        switch error {
        case is CLIError, is StoreError, is KeyError:
            Terminal.printError("\(toolName): \(Terminal.message(for: error))")
            return ExitStatus.for(error)
        case let code as ExitCode:
            return ExitStatus(rawValue: code.rawValue) ?? .failure
        default:
            // ArgumentParser's own errors: help, version, usage mistakes.
            let code = Root.exitCode(for: error)
            let text = Root.fullMessage(for: error)
            if code == .success {
                if !text.isEmpty { Terminal.print(text) }
                return .ok
            }
            if code == .validationFailure {
                Terminal.printError(text)
                return .usage
            }
            Terminal.printError("\(toolName): \(Terminal.message(for: error))")
            return .failure
        }
    }
}
