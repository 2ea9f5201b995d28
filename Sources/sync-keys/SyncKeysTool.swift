import ArgumentParser
import Foundation
import SyncCLI

/// `sync-keys`: key management for a CipherSync store. Every command is a thin layer over
/// `StoreKeys` (SyncKeyMaintenance) and SyncCLI; docs/sync-keys.md is its manual.
/// `main.swift` runs it through `CommandRunner`.
struct SyncKeysTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-keys",
        abstract: "Manage the keys of an encrypted CipherSync store.",
        discussion: """
            Secrets are read from --passphrase-file / --passphrase-fd, the environment variables \
            CIPHERSYNC_PASSPHRASE / CIPHERSYNC_NEW_PASSPHRASE (cleared at start-up), or a prompt \
            without echo — never from the command line. A TPM slot's PIN is read from --pin-file / \
            --pin-fd or a prompt only. The TPM is named by --tcti or CIPHERSYNC_TCTI (default \
            device:/dev/tpmrm0).
            Exit codes: 0 ok, 1 failure, 2 usage, 3 wrong passphrase, 4 missing or damaged key material \
            (or a shredded store), 6 disk full (nothing was changed; free space and run again), \
            7 disk I/O error, 8 wrong PIN, 9 TPM locked out, 10 TPM slot unusable here.
            """,
        subcommands: [
            Init.self, Status.self, ChangePassphrase.self, Rotate.self, Verify.self, Encrypt.self, AddRecoveryKey.self,
            AddTPMSlot.self, RemoveSlot.self, Shred.self,
        ])
}

/// The `--store PATH` option every command takes.
struct StoreLocation: ParsableArguments {
    @Option(name: .customLong("store"), help: ArgumentHelp("The store's database file.", valueName: "path"))
    var path: String

    /// The database file as an absolute URL.
    var url: URL { URL(fileURLWithPath: path).standardizedFileURL }

    /// The file name, for prompts.
    var name: String { url.lastPathComponent }

    func validate() throws {
        if path.isEmpty { throw ValidationError("--store needs a path.") }
    }
}

/// JSON for `--json` output: sorted keys, pretty, one document.
func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    Terminal.print(String(decoding: try encoder.encode(value), as: UTF8.self))
}
