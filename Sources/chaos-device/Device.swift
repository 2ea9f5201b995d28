import Foundation
import SyncClient
import SyncKeyMaintenance
import SyncKeys
import SyncStore
import SyncTestSupport
import SyncWire

/// One device of a chaos run: an encrypted store, a sync context signed in as one user, and the
/// commands the orchestrator sends it. Local writes run in command order; pushes, pulls and
/// purges run as tasks of their own (the context runs them one at a time), so that local writes
/// go on while they are at the server.
actor Device {
    let log: HistoryLog
    let storeURL: URL
    let serverURL: URL
    let policy: ConflictPolicy
    private var random: SeededGenerator
    private var store: SQLiteStore?
    private var context: SyncContext?
    private var live: LiveSync?
    private var token = ""
    private var passphrase: SecretBytes?
    /// The passphrases of the last `open` command, tried again when the store is not open (an open
    /// that met a full disk).
    private var candidates: [String] = []
    private var running: [Task<Void, Never>] = []

    static let table = "todos"

    init(log: HistoryLog, storeURL: URL, serverURL: URL, policy: ConflictPolicy, seed: UInt64) {
        self.log = log
        self.storeURL = storeURL
        self.serverURL = serverURL
        self.policy = policy
        self.random = SeededGenerator(seed: seed)
    }

    /// Runs one command; its outcome is logged (`done`) and returned as the reply's fields.
    func run(_ command: JSONObject) async -> JSONObject {
        let op = command["op"]?.stringValue ?? ""
        var reply: JSONObject = ["n": command["n"] ?? .null, "op": .string(op)]
        do {
            let result = try await perform(op, command)
            reply["ok"] = .bool(true)
            for (key, value) in result { reply[key] = value }
        } catch {
            reply["ok"] = .bool(false)
            reply["error"] = .string("\(error)")
            reply["errorKind"] = .string(errorKind(error))
        }
        var logged = reply
        for (key, value) in command where key != "token" && key != "passphrases" && key != "new" { logged["arg." + key] = value }
        log.write("done", logged)
        return reply
    }

    private func perform(_ op: String, _ command: JSONObject) async throws -> JSONObject {
        let id = command["id"]?.stringValue ?? ""
        let text = command["text"]?.stringValue ?? ""
        if op != "open", op != "close", store == nil, !candidates.isEmpty {
            // The store did not open (a full disk, or its reopening after a key change failed): try again.
            try await reopen()
        }
        switch op {
        case "open":
            token = command["token"]?.stringValue ?? ""
            candidates = command["passphrases"]?.arrayValue?.compactMap(\.stringValue) ?? []
            return try await open(candidates)
        case "insert", "undelete":
            // An undelete is an insert of an id the device deleted: the server answers with its
            // deleted copy, and the conflict policy decides (client wins restores it).
            try await table().insert(["id": .string(id), "text": .string(text)])
        case "update":
            guard var row = try await table().lookup(id: id) else { return ["skipped": .string("absent")] }
            row["text"] = .string(text)
            try await table().update(row)
        case "delete":
            guard try await table().lookup(id: id) != nil else { return ["skipped": .string("absent")] }
            try await table().delete(id: id)
        case "push", "pull", "purge":
            let job = try job(op, command)
            running.append(Task { await self.background(op, command, job) })
            return ["started": .bool(true)]
        case "live":
            return try await setLive(command["on"]?.boolValue ?? false)
        case "passphrase", "rotate":
            return try await rekey(op, newPassphrase: command["new"]?.stringValue)
        case "settle":
            return try await settle()
        case "dump":
            return try await dump()
        case "close":
            try await closeStore()
        default:
            throw DeviceError.badCommand(op)
        }
        return [:]
    }

    private func table() throws -> SyncTable {
        guard let context else { throw DeviceError.notOpen }
        return try context.syncTable(Self.table)
    }

    // MARK: opening and keys

    private func open(_ candidates: [String]) async throws -> JSONObject {
        for (index, candidate) in candidates.enumerated() {
            let secret = SecretBytes(Array(candidate.utf8))
            do {
                let opened = try await SQLiteStore.open(
                    at: storeURL, encryption: .passphrase(secret),
                    options: StoreOptions(createIfMissing: true, keyProfile: .insecureTest, allowInsecureKeyProfile: true))
                attach(opened, passphrase: secret)
                return ["passphrase": .int(Int64(index))]
            } catch StoreError.wrongPassphrase {
                continue
            }
        }
        throw DeviceError.noPassphrase
    }

    /// Opens the store again with the current passphrase, or else with the last `open` command's.
    private func reopen() async throws {
        if let passphrase {
            do {
                let opened = try await SQLiteStore.open(
                    at: storeURL, encryption: .passphrase(passphrase), options: StoreOptions(allowInsecureKeyProfile: true))
                attach(opened, passphrase: passphrase)
                log.write("reopened")
                return
            } catch StoreError.wrongPassphrase {}
        }
        _ = try await open(candidates)
        log.write("reopened")
    }

    private func attach(_ opened: SQLiteStore, passphrase secret: SecretBytes) {
        let token = self.token
        let client = MobileServiceClient(
            url: serverURL, transport: RecordingTransport(base: HTTPSyncTransport(timeout: 4), log: log),
            authenticationToken: { token })
        store = opened
        passphrase = secret
        context = SyncContext(client: client, store: opened)
    }

    private func closeStore() async throws {
        _ = try await setLive(false)
        for task in running { await task.value }
        running = []
        let closing = store
        // A close that fails (a checkpoint on a full disk) leaves no usable store either.
        store = nil
        context = nil
        if let closing { try await closing.close() }
    }

    /// Changes the passphrase or rotates the data key with the store closed, then opens it again.
    private func rekey(_ op: String, newPassphrase: String?) async throws -> JSONObject {
        guard let passphrase else { throw DeviceError.notOpen }
        let wasLive = live != nil
        try await closeStore()
        var current = passphrase
        var result: JSONObject = [:]
        do {
            if op == "passphrase", let newPassphrase {
                let new = SecretBytes(Array(newPassphrase.utf8))
                try StoreKeys.changePassphrase(forDatabase: storeURL, from: passphrase, to: new, allowInsecureProfile: true)
                current = new
                result["changed"] = .bool(true)
            } else {
                let rotation = try StoreKeys.rotateDataKey(forDatabase: storeURL, passphrase: passphrase, allowInsecureProfile: true)
                result["keyId"] = .string(rotation.keyId)
            }
        } catch {
            result["keyError"] = .string("\(error)")
            result["keyErrorKind"] = .string(errorKind(error))
        }
        self.passphrase = current
        let opened = try await SQLiteStore.open(
            at: storeURL, encryption: .passphrase(current), options: StoreOptions(allowInsecureKeyProfile: true))
        attach(opened, passphrase: current)
        if wasLive { _ = try await setLive(true) }
        return result
    }

    // MARK: sync jobs

    private enum Job {
        case push(parallelism: Int, batching: PushBatching)
        case pull(queryId: String?)
        case purge(queryId: String?, force: Bool)
    }

    private func job(_ op: String, _ command: JSONObject) throws -> Job {
        switch op {
        case "push":
            switch command["mode"]?.stringValue {
            case "parallel": return .push(parallelism: 4, batching: .off)
            case "batched": return .push(parallelism: 1, batching: .automatic)
            default: return .push(parallelism: 1, batching: .off)
            }
        case "pull": return .pull(queryId: command["queryId"]?.stringValue)
        default: return .purge(queryId: command["queryId"]?.stringValue, force: command["force"]?.boolValue ?? false)
        }
    }

    private func background(_ op: String, _ command: JSONObject, _ job: Job) async {
        var fields: JSONObject = ["job": .string(op), "n": command["n"] ?? .null]
        do {
            switch job {
            case .push(let parallelism, let batching):
                try await pushOnce(parallelism: parallelism, batching: batching)
            case .pull(let queryId):
                fields["items"] = .int(Int64(try await table().pull(queryId: queryId)))
            case .purge(let queryId, let force):
                try await table().purge(queryId: queryId, force: force)
            }
            fields["ok"] = .bool(true)
        } catch {
            fields["ok"] = .bool(false)
            fields["error"] = .string("\(error)")
            fields["errorKind"] = .string(errorKind(error))
        }
        log.write("job", fields)
        if case .pull = job { await snapshot() }
        if case .push = job { await resolveErrors() }
    }

    private func pushOnce(parallelism: Int, batching: PushBatching) async throws {
        guard let context else { throw DeviceError.notOpen }
        try await context.setPushParallelism(parallelism)
        await context.setPushBatching(batching)
        try await context.push()
    }

    private func setLive(_ on: Bool) async throws -> JSONObject {
        if on {
            guard live == nil, let context else { return [:] }
            let options = LiveSyncOptions(
                pushDelay: .milliseconds(50), initialBackoff: .milliseconds(100), maximumBackoff: .seconds(1),
                fallbackPullInterval: .seconds(2))
            let started = try context.startLiveSync([LiveSyncTable(Self.table, queryId: "live")], options: options)
            live = started
            let log = self.log
            Task {
                for await event in started.events { log.write("live", ["event": .string("\(event)")]) }
            }
        } else if let live {
            await live.stop()
            self.live = nil
        }
        return [:]
    }

    // MARK: conflicts

    /// Resolves every stored operation error by the device's policy, logging each.
    private func resolveErrors() async {
        guard let context else { return }
        guard let errors = try? await context.operationErrors() else { return }
        for error in errors {
            let choice = policy.choice(using: &random)
            var fields: JSONObject = [
                "id": .string(error.itemId), "kind": .string("\(error.kind)"), "status": error.statusCode.map { JSONValue.int(Int64($0)) } ?? .null,
                "conflict": .string(error.conflict?.rawValue ?? "none"), "resolution": .string(choice.rawValue),
                "local": .object(error.item ?? [:]), "server": .object(error.serverItem ?? [:]),
            ]
            do {
                try await resolve(error, choice)
                fields["ok"] = .bool(true)
            } catch {
                fields["ok"] = .bool(false)
                fields["error"] = .string("\(error)")
                fields["errorKind"] = .string(errorKind(error))
            }
            log.write("conflict", fields)
        }
    }

    private func resolve(_ error: TableOperationError, _ choice: ConflictPolicy.Choice) async throws {
        guard error.conflict != nil else { return try await error.keepLocalChange() }
        switch choice {
        case .clientWins:
            try await error.keepLocalChange()
        case .serverWins:
            if error.conflict == .changedOnServer, let server = error.serverItem {
                try await error.cancelAndUpdate(server)
            } else {
                try await error.acceptDelete()
            }
        case .cancel:
            try await error.cancelAndDiscard()
        }
    }

    // MARK: settling and snapshots

    /// Waits for the running jobs, then pushes (resolving conflicts) and pulls in full, once.
    private func settle() async throws -> JSONObject {
        for task in running { await task.value }
        running = []
        _ = try await setLive(false)
        var fields: JSONObject = [:]
        do {
            try await pushOnce(parallelism: 1, batching: .off)
        } catch {
            fields["pushError"] = .string("\(error)")
        }
        await resolveErrors()
        do {
            fields["pulled"] = .int(Int64(try await table().pull()))
        } catch {
            fields["pullError"] = .string("\(error)")
        }
        await snapshot()
        let state = try await dump()
        return fields.merging(state) { $1 }
    }

    /// The local rows, the pending operations and the stored errors.
    private func dump() async throws -> JSONObject {
        guard let context else { throw DeviceError.notOpen }
        let rows = try await table().read().items
        let pending = try await context.pendingOperations()
        let errors = try await context.operationErrors()
        return [
            "rows": .array(rows.map { .object($0) }),
            "pending": .array(pending.map { .string("\($0.kind) \($0.itemId) \($0.state)") }),
            "errors": .int(Int64(errors.count)),
        ]
    }

    /// Logs the id, version and `updatedAt` of every local row.
    private func snapshot() async {
        guard let rows = try? await table().read().items else { return }
        let brief: [JSONValue] = rows.map { row in
            .object(["id": row["id"] ?? .null, "version": row["version"] ?? .null, "updatedAt": row["updatedAt"] ?? .null])
        }
        log.write("snapshot", ["rows": .array(brief)])
    }
}

/// The kind of a failure as the checker sorts it: `diskFull` and `ioError` for the store's typed
/// disk errors (bare, or behind a `SyncError`), `store` for another store error, `sync` for
/// another `SyncError`, `other` for the rest.
func errorKind(_ error: any Error) -> String {
    let store = (error as? StoreError) ?? (error as? SyncError)?.storeError
    if let store {
        if store == .diskFull { return "diskFull" }
        if store == .ioError { return "ioError" }
        return "store"
    }
    return error is SyncError ? "sync" : "other"
}

/// How a device resolves the conflicts its pushes meet.
struct ConflictPolicy {
    enum Choice: String { case clientWins = "client", serverWins = "server", cancel }
    /// A fixed choice, or `nil` for a seeded random one per conflict.
    let fixed: Choice?

    init(_ name: String) {
        fixed = name == "random" ? nil : Choice(rawValue: name) ?? .clientWins
    }

    func choice(using random: inout SeededGenerator) -> Choice {
        fixed ?? [Choice.clientWins, .serverWins, .cancel].randomElement(using: &random) ?? .clientWins
    }
}
