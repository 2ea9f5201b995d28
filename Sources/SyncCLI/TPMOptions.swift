public import ArgumentParser
import Foundation
public import SyncKeys
import SyncTPM

/// The `--tcti` option: which TPM the tool talks to, as a tpm2-tss TCTI configuration string
/// (`device:/dev/tpmrm0`, `swtpm:host=127.0.0.1,port=2321`). Not a secret, so it may also come
/// from the environment variable `CIPHERSYNC_TCTI`; the default is the kernel's resource manager,
/// `device:/dev/tpmrm0`.
public struct TPMOptions: ParsableArguments, Sendable {
    /// The configuration given on the command line.
    @Option(
        name: .customLong("tcti"),
        help: ArgumentHelp(
            "The TPM, as a TCTI configuration (default: $CIPHERSYNC_TCTI, else device:/dev/tpmrm0).", valueName: "conf"))
    public var tcti: String?

    /// The options with their defaults (ArgumentParser fills them).
    public init() {}

    /// The configuration to use: `--tcti`, else `CIPHERSYNC_TCTI`, else the default.
    public var configuration: String {
        if let tcti, !tcti.isEmpty { return tcti }
        if let value = ProcessInfo.processInfo.environment[TPMDevice.environmentVariable], !value.isEmpty { return value }
        return TPMDevice.defaultConfiguration
    }
}

/// Where a tool reads the PIN of a TPM slot: `--pin-file`, `--pin-fd`, or a prompt without echo.
/// Never the command line or the environment.
public struct PINOptions: ParsableArguments, Sendable {
    /// The file whose first line is the PIN.
    @Option(name: .customLong("pin-file"), help: ArgumentHelp("Read the TPM slot's PIN from the first line of this file.", valueName: "path"))
    public var file: String?

    /// The open descriptor whose first line is the PIN.
    @Option(
        name: .customLong("pin-fd"), help: ArgumentHelp("Read the TPM slot's PIN from this open file descriptor.", valueName: "n"))
    public var descriptor: Int32?

    /// The options with their defaults (ArgumentParser fills them).
    public init() {}

    /// Refuses a file and a descriptor given together.
    ///
    /// - Throws: `ValidationError`.
    public func validate() throws {
        if file != nil && descriptor != nil { throw ValidationError("Give the PIN with --pin-file or --pin-fd, not both.") }
    }

    /// Reads the PIN.
    ///
    /// - Parameters:
    ///   - prompt: The prompt on a terminal.
    ///   - confirm: Ask twice on a terminal (a new PIN).
    /// - Throws: ``CLIError`` (usage) when no source is available.
    public func read(prompt: String, confirm: Bool = false) throws -> SecretBytes {
        try Self.read(file: file, descriptor: descriptor, prompt: prompt, confirm: confirm, sourceHint: "--pin-file or --pin-fd")
    }

    /// Reads a PIN from `file`, `descriptor` or a prompt (never from the environment).
    ///
    /// - Throws: ``CLIError`` (usage).
    public static func read(file: String?, descriptor: Int32?, prompt: String, confirm: Bool, sourceHint: String) throws -> SecretBytes {
        try SecretReader.read(
            file: file, descriptor: descriptor, environment: SecretEnvironment(), variable: "", prompt: prompt, confirm: confirm,
            sourceHint: sourceHint)
    }
}
