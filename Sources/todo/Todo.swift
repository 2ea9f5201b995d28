import ArgumentParser
import Foundation
@_spi(Testing) import SyncCLI
@_spi(Testing) import SyncClient
import SyncKeyMaintenance
import SyncKeys
import SyncStore
import SyncTPM
import SyncWire
@_spi(Testing) import TodoApp

/// `todo`: the tutorial todo app as an offline terminal program over an encrypted store.
struct Todo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "todo",
        abstract: "A todo list that works offline, syncs with a CipherSync server and keeps its data encrypted.",
        discussion: """
            The store is encrypted unless --plain. The passphrase comes from --passphrase-file, \
            --passphrase-fd, the environment variable CIPHERSYNC_PASSPHRASE (cleared once read), or a \
            prompt. The first use creates the store and asks for a new passphrase.
            The device options (--store, --server, --plain, --auth-token-file, --passphrase-file, \
            --passphrase-fd, --profile) go before or after the command: todo --store a.db list.
            Exit codes: 0 ok, 1 failure (a conflict, a server error, an unknown or ambiguous id), 2 usage, \
            3 wrong passphrase, 4 key material missing or damaged (or a damaged database), 5 offline (the server cannot be \
            reached; changes stay queued), 6 disk full (free space, then try again and sync), 7 disk I/O error, 8 wrong PIN, 9 TPM locked out, 10 TPM slot unusable here.
            With --unlock tpm an existing store opens through its TPM slot (sync-keys add-tpm-slot); the PIN, if the slot \
            has one, comes from --pin-file, --pin-fd or a prompt, and the TPM from --tcti or CIPHERSYNC_TCTI.
            """,
        subcommands: [
            Add.self, List.self, Complete.self, Edit.self, Delete.self, Push.self, Pull.self, Sync.self, Purge.self,
            Pending.self, Conflicts.self, Status.self, Watch.self, Demo.self, Attach.self, Attachments.self, Export.self,
        ])
}

/// The options every store command shares.
struct DeviceOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The store file.", valueName: "path")) var store = "todo.db"
    @Option(help: ArgumentHelp("The sync server.", valueName: "url")) var server = "http://127.0.0.1:8080"
    @Flag(help: "Use a plain (unencrypted) store.") var plain = false
    @Option(help: ArgumentHelp("Send the X-ZUMO-AUTH token on this file's first line.", valueName: "path"))
    var authTokenFile: String?
    @OptionGroup var passphrase: PassphraseOptions
    @OptionGroup var profile: KeyProfileOptions
    @Option(help: ArgumentHelp("Unlock an existing store with its passphrase (default) or its TPM slot.", valueName: "slot"))
    var unlock: UnlockWith = .passphrase
    @OptionGroup var pin: PINOptions
    @OptionGroup var tpm: TPMOptions

    /// The slot `--unlock` names.
    enum UnlockWith: String, ExpressibleByArgument {
        case passphrase, tpm
    }

    func validate() throws {
        guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ValidationError("--server must be an http(s) URL")
        }
    }

    /// Opens the device, creating the store (and asking for a new passphrase) on first use.
    /// `readOnly` opens an existing store for reading only: nothing is created or written, so a
    /// listing works on a full disk and on read-only media.
    func open(readOnly: Bool = false) async throws -> TodoDevice {
        // The test-only crash switch (CONTRIBUTING.md, "Test-only switches"); nil on every device.
        let fault = try FaultInjection.fromEnvironment(steps: SyncCheckpoint.allCases.map(\.rawValue))
        let url = URL(fileURLWithPath: store)
        let exists = FileManager.default.fileExists(atPath: url.path)
        let encryption: StoreEncryption
        if plain {
            encryption = .none
        } else if unlock == .tpm {
            encryption = .slot(try tpmUnlocker(for: url))
        } else {
            let prompt = exists ? "Passphrase for \(store): " : "New passphrase for \(store): "
            encryption = .passphrase(try passphrase.read(prompt: prompt, confirm: !exists))
        }
        let options = StoreOptions(
            createIfMissing: !exists, keyProfile: profile.profile, allowInsecureKeyProfile: KeyProfileOptions.allowsInsecureProfile,
            readOnly: readOnly && exists)
        guard let serverURL = URL(string: server) else { throw ValidationError("--server must be an http(s) URL") }
        let checkpoint: (@Sendable (SyncCheckpoint) -> Void)? = fault.map { fault in
            { @Sendable step in fault.observe(step: step.rawValue) }
        }
        return try await TodoDevice.open(
            store: url, encryption: encryption, options: options, server: serverURL, authenticationToken: try authToken(),
            checkpoint: checkpoint)
    }

    /// The unlocker of the store's TPM slot, with its PIN read when the slot has one.
    func tpmUnlocker(for url: URL) throws -> TPMSlotUnlocker {
        let status = try StoreKeys.status(forDatabase: url)
        guard !status.shredded else { throw StoreError(KeyError.shredded) }
        guard let binding = status.slots.first(where: { $0.id == KeyEnvelope.tpmSlot })?.tpm else {
            throw StoreError(KeyError.slotMissing(KeyEnvelope.tpmSlot))
        }
        let pin = binding.pin ? try pin.read(prompt: "PIN for \(store): ") : nil
        return TPMSlotUnlocker(configuration: tpm.configuration, pin: pin)
    }

    /// The first line of `--auth-token-file`, if given.
    func authToken() throws -> String? {
        guard let authTokenFile else { return nil }
        guard let text = try? String(contentsOfFile: authTokenFile, encoding: .utf8),
            case let token = String(text.prefix { !$0.isNewline }), !token.isEmpty
        else { throw CLIError.usage("Cannot read a token from --auth-token-file \(authTokenFile).") }
        return token
    }

    /// Opens the device (for reading only with `readOnly`), runs `body`, closes the device; maps
    /// the app's errors to exit codes. A failure to close (the log's checkpoint on a full or failing
    /// disk) is printed as a warning: the command's writes were on the disk when they returned, so
    /// the command itself succeeded, but the disk needs attention.
    func with<T>(readOnly: Bool = false, _ body: (TodoDevice) async throws -> T) async throws -> T {
        let device = try await open(readOnly: readOnly)
        let result: T
        do {
            result = try await body(device)
        } catch {
            try? await device.close()
            throw Self.exit(for: error)
        }
        do {
            try await device.close()
        } catch {
            Terminal.printError("todo: warning: \(Terminal.message(for: error))")
        }
        return result
    }

    /// Offline is exit 5 (with its message); a failure of the local store is the store's error (a
    /// full disk, an I/O error, a damaged file: each its message and exit code); other app errors
    /// are one line and exit 1.
    static func exit(for error: any Error) -> any Error {
        if let sync = error as? SyncError, let store = sync.storeError { return store }
        guard let todo = error as? TodoError else { return error }
        if todo == TodoError.resolutionWouldRepeat { return CLIError(.resolutionWouldRepeat, todo.description) }
        if todo == TodoError.itemIDCaseClash { return CLIError(.itemIDCaseClash, todo.description) }
        switch todo {
        case .offline:
            return CLIError(.offline, todo.description)
        case .nothingToChange:
            return CLIError.usage(todo.description)
        default:
            return CLIError.failure(todo.description)
        }
    }
}

/// Output helpers.
enum Output {
    static func short(_ id: String) -> String { String(id.prefix(8)) }

    static func line(_ item: JSONObject) -> String {
        let done = item["complete"]?.boolValue == true ? "x" : " "
        return "\(short(item["id"]?.stringValue ?? "?"))  [\(done)] \(item["text"]?.stringValue ?? "")"
    }

    static func json(_ value: some Encodable) throws {
        Terminal.print(String(decoding: try JSONCoding.encode(value), as: UTF8.self))
    }

    /// Shows push and pull progress on a terminal while `body` runs.
    static func withProgress<T>(_ device: TodoDevice, _ body: () async throws -> T) async throws -> T {
        guard Terminal.isErrorTerminal else { return try await body() }
        let events = await device.context.events()
        let watcher = Task {
            for await event in events {
                switch event {
                case .pushStarted(let n): Terminal.write("\rpushing \(n) change(s)…", to: STDERR_FILENO)
                case .pushFinished(let ok, let failed): Terminal.write("\rpushed \(ok), failed \(failed)        \n", to: STDERR_FILENO)
                case .pagePulled(_, _, let total): Terminal.write("\rpulled \(total) item(s)…", to: STDERR_FILENO)
                case .pullFinished(_, let n): Terminal.write("\rpulled \(n) item(s)        \n", to: STDERR_FILENO)
                default: break
                }
            }
        }
        defer { watcher.cancel() }
        return try await body()
    }
}

extension DeviceOptions {
    /// The options every command takes, which may also come before the command:
    /// `todo --store a.db list` is `todo list --store a.db`.
    static let leadingOptions: Set<String> = [
        "--store", "--server", "--profile", "--passphrase-file", "--passphrase-fd", "--auth-token-file", "--unlock", "--pin-file",
        "--pin-fd", "--tcti",
    ]
    static let leadingFlags: Set<String> = ["--plain"]

    /// Moves the device options written before the command to just after it, where the command
    /// parses them. Anything else is left where it is, for the parser to judge.
    static func commandFirst(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let name = String(argument.prefix { $0 != "=" })
            if leadingFlags.contains(argument) || (leadingOptions.contains(name) && argument.contains("=")) {
                leading.append(argument)
                index += 1
            } else if leadingOptions.contains(argument), index + 1 < arguments.count {
                leading += arguments[index...(index + 1)]
                index += 2
            } else {
                break
            }
        }
        guard !leading.isEmpty, index < arguments.count, !arguments[index].hasPrefix("-") else { return arguments }
        return [arguments[index]] + leading + arguments[(index + 1)...]
    }
}
