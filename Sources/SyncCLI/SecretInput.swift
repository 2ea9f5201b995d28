public import ArgumentParser
import Foundation
public import SyncKeys

/// The options that say where a tool reads the store's passphrase (or recovery code).
///
/// Order of precedence: `--passphrase-file`, `--passphrase-fd`, the environment variable
/// `CIPHERSYNC_PASSPHRASE` (cleared at start-up), then a prompt without echo when standard input
/// is a terminal. A secret is never taken from the command line itself.
public struct PassphraseOptions: ParsableArguments, Sendable {
    /// The file whose first line is the passphrase (`--passphrase-file`).
    @Option(
        name: .customLong("passphrase-file"),
        help: ArgumentHelp(
            "Read the passphrase from the first line of this file.", valueName: "path"))
    public var file: String?

    /// The open descriptor whose first line is the passphrase (`--passphrase-fd`).
    @Option(
        name: .customLong("passphrase-fd"),
        help: ArgumentHelp(
            "Read the passphrase from the first line of this open file descriptor (0 for standard input).",
            valueName: "n"))
    public var descriptor: Int32?

    /// The options with their defaults (ArgumentParser fills them).
    public init() {}

    /// Refuses a file and a descriptor given together.
    ///
    /// - Throws: `ValidationError`.
    public func validate() throws {
        if file != nil && descriptor != nil {
            throw ValidationError("Give the passphrase with --passphrase-file or --passphrase-fd, not both.")
        }
    }

    /// Reads the secret from the first source given.
    ///
    /// - Parameters:
    ///   - prompt: The prompt on a terminal, e.g. `"Passphrase for store.db: "`.
    ///   - confirm: Ask twice on a terminal (for a secret being set).
    ///   - environment: Where `CIPHERSYNC_PASSPHRASE` was captured (the process's own by default).
    /// - Throws: ``CLIError`` with ``ExitStatus/usage`` when no source is available, a file cannot
    ///   be read, the secret is too long or the confirmation differs.
    public func read(prompt: String, confirm: Bool = false, environment: SecretEnvironment = .process) throws -> SecretBytes {
        try SecretReader.read(
            file: file, descriptor: descriptor, environment: environment, variable: SecretEnvironment.passphrase,
            prompt: prompt, confirm: confirm,
            sourceHint: "--passphrase-file, --passphrase-fd or \(SecretEnvironment.passphrase)")
    }
}

/// The options for a *new* passphrase: `--new-passphrase-file`, `--new-passphrase-fd`, the
/// environment variable `CIPHERSYNC_NEW_PASSPHRASE`, or a prompt asked twice.
public struct NewPassphraseOptions: ParsableArguments, Sendable {
    /// The file whose first line is the new passphrase (`--new-passphrase-file`).
    @Option(
        name: .customLong("new-passphrase-file"),
        help: ArgumentHelp(
            "Read the new passphrase from the first line of this file.", valueName: "path"))
    public var file: String?

    /// The open descriptor whose first line is the new passphrase (`--new-passphrase-fd`).
    @Option(
        name: .customLong("new-passphrase-fd"),
        help: ArgumentHelp(
            "Read the new passphrase from the first line of this open file descriptor.", valueName: "n"))
    public var descriptor: Int32?

    /// The options with their defaults (ArgumentParser fills them).
    public init() {}

    /// Refuses a file and a descriptor given together.
    ///
    /// - Throws: `ValidationError`.
    public func validate() throws {
        if file != nil && descriptor != nil {
            throw ValidationError("Give the new passphrase with --new-passphrase-file or --new-passphrase-fd, not both.")
        }
    }

    /// Reads the new secret (asked twice on a terminal).
    ///
    /// - Parameters:
    ///   - prompt: The prompt on a terminal.
    ///   - environment: Where `CIPHERSYNC_NEW_PASSPHRASE` was captured (the process's own by default).
    /// - Throws: ``CLIError`` (usage), as ``PassphraseOptions/read(prompt:confirm:environment:)``.
    public func read(prompt: String, environment: SecretEnvironment = .process) throws -> SecretBytes {
        try SecretReader.read(
            file: file, descriptor: descriptor, environment: environment, variable: SecretEnvironment.newPassphrase,
            prompt: prompt, confirm: true,
            sourceHint: "--new-passphrase-file, --new-passphrase-fd or \(SecretEnvironment.newPassphrase)")
    }
}

/// Reads secrets into `SecretBytes` from a file, a descriptor, the captured environment or a
/// terminal prompt without echo. Input is read byte by byte up to the end of the first line, into
/// a buffer that never grows (so no stray copies), and at most `Passphrase/maximumLength` bytes.
public enum SecretReader {
    /// Reads one secret from the first source given (see ``PassphraseOptions``).
    ///
    /// - Parameters:
    ///   - file: A file whose first line is the secret.
    ///   - descriptor: An open descriptor whose first line is the secret.
    ///   - environment: The captured environment, asked for `variable`.
    ///   - variable: The environment variable of this secret.
    ///   - prompt: The prompt on a terminal.
    ///   - confirm: Ask twice on a terminal.
    ///   - sourceHint: The ways to give the secret, for the message when none was used.
    /// - Returns: The secret.
    /// - Throws: ``CLIError`` (usage).
    public static func read(
        file: String?, descriptor: Int32?, environment: SecretEnvironment, variable: String, prompt: String, confirm: Bool,
        sourceHint: String
    ) throws -> SecretBytes {
        if let file {
            let fd = open(file, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw CLIError.usage("Cannot read the passphrase file \(file): \(String(cString: strerror(errno))).")
            }
            defer { close(fd) }
            return try readLine(from: fd, source: file)
        }
        if let descriptor {
            return try readLine(from: descriptor, source: "file descriptor \(descriptor)")
        }
        if let secret = environment.take(variable) {
            guard secret.count <= Passphrase.maximumLength else { throw tooLong }
            return secret
        }
        guard Terminal.isInputTerminal else {
            throw CLIError.usage("No passphrase given: use \(sourceHint), or run on a terminal to be asked.")
        }
        let first = try prompted(prompt)
        guard confirm else { return first }
        let second = try prompted("Repeat: ")
        guard first == second else { throw CLIError.usage("The two entries do not match; nothing was changed.") }
        return first
    }

    static var tooLong: CLIError { .usage("The passphrase is longer than \(Passphrase.maximumLength) bytes.") }

    /// Reads up to the first newline (not included; a trailing CR is dropped too) or the end.
    public static func readLine(from descriptor: Int32, source: String) throws -> SecretBytes {
        let limit = Passphrase.maximumLength
        var bytes = [UInt8]()
        bytes.reserveCapacity(limit + 2)
        var byte: UInt8 = 0
        defer { byte = 0 }
        while true {
            let count = Foundation.read(descriptor, &byte, 1)
            if count < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                _ = SecretBytes(wiping: &bytes)
                throw CLIError.usage("Cannot read the passphrase from \(source): \(reason).")
            }
            if count == 0 || byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
            if bytes.count > limit + 1 {
                _ = SecretBytes(wiping: &bytes)
                throw tooLong
            }
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        let secret = SecretBytes(wiping: &bytes)
        guard secret.count <= limit else { throw tooLong }
        return secret
    }

    /// Asks on the controlling terminal with echo off.
    static func prompted(_ prompt: String) throws -> SecretBytes {
        let tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard tty >= 0 else { throw CLIError.usage("Cannot open the terminal to ask for the passphrase.") }
        defer { close(tty) }
        // Echo goes off before the prompt shows, so nothing typed after it is echoed or flushed.
        var saved = termios()
        let hasTermios = tcgetattr(tty, &saved) == 0
        if hasTermios {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            silent.c_lflag |= tcflag_t(ICANON)
            _ = tcsetattr(tty, TCSAFLUSH, &silent)
        }
        Terminal.write(prompt, to: tty)
        defer {
            if hasTermios { _ = tcsetattr(tty, TCSAFLUSH, &saved) }
            Terminal.write("\n", to: tty)
        }
        return try readLine(from: tty, source: "the terminal")
    }
}
