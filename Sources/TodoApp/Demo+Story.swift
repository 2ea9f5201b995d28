import Foundation
import SyncClient
import SyncKeys
import SyncStore
import SyncWire

extension Demo {
    func story(server: URL, directory: URL) async throws -> Bool {
        let list = Checklist(output: output)
        let urlA = directory.appendingPathComponent("device-a.db"), urlB = directory.appendingPathComponent("device-b.db")
        var passA = try Self.makePassphrase()
        let passB = try Self.makePassphrase()
        let options = StoreOptions(createIfMissing: true, keyProfile: keyProfile, allowInsecureKeyProfile: allowInsecureKeyProfile)
        let reopen = StoreOptions(keyProfile: keyProfile, allowInsecureKeyProfile: allowInsecureKeyProfile)

        list.step("1. Two devices, each with its own encrypted store")
        var a = try await TodoDevice.open(store: urlA, encryption: .passphrase(passA), options: options, server: server)
        let b = try await TodoDevice.open(store: urlB, encryption: .passphrase(passB), options: options, server: server)
        list.check(
            a.store.isEncrypted && b.store.isEncrypted,
            "device A and device B stores are encrypted (SQLCipher, random data key wrapped under each passphrase)")

        list.step("2. Device A works offline")
        let milk = try await a.add(text: "Buy milk")
        _ = try await a.add(text: "Call the plumber")
        let fence = try await a.add(text: "Paint the fence")
        let milkID = milk["id"]?.stringValue ?? "", fenceID = fence["id"]?.stringValue ?? ""
        list.say("added 3 items; nothing was sent")
        list.check(try await a.context.pendingOperationsCount == 3, "3 changes wait in A's (encrypted) queue")

        list.step("3. Device A syncs; device B pulls")
        let synced = try await a.sync()
        let queuedAfterSync = try await a.context.pendingOperationsCount
        list.check(synced.pushed == 3 && queuedAfterSync == 0, "A pushed 3 changes and its queue is empty")
        try await b.pull()
        list.check(try await b.items().count == 3, "B pulled the 3 items")

        list.step("4. Both devices edit \"Buy milk\"; the second push conflicts")
        try await a.edit(milkID, text: "Buy oat milk")
        try await b.edit(milkID, text: "Buy almond milk")
        try await a.push()
        list.say("A pushed \"Buy oat milk\" first")
        var conflictSeen = false
        do {
            try await b.push()
        } catch let error as TodoError where error == .conflicts {
            conflictSeen = error.count == 1
        }
        let conflicts = try await b.context.operationErrors()
        list.check(
            conflictSeen && conflicts.count == 1 && conflicts[0].statusCode == 412, "B's push was refused with 412: the server has a newer version")
        if let conflict = conflicts.first {
            list.say("local:  \(conflict.item?["text"]?.stringValue ?? "?")")
            list.say("server: \(conflict.serverItem?["text"]?.stringValue ?? "?")")
            list.say("resolving with \"use client\": B's change is sent again over the server's version")
            try await b.resolve(conflict, with: .client)
        }
        try await b.push()
        try await a.pull()
        let milkOnA = try await a.table.lookup(id: milkID)
        list.check(milkOnA?["text"]?.stringValue == "Buy almond milk", "A now sees B's \"Buy almond milk\"")
        let errorsLeft = try await b.context.operationErrors().count, queuedLeft = try await b.context.pendingOperationsCount
        list.check(errorsLeft == 0 && queuedLeft == 0, "no conflict and nothing queued is left on B")

        list.step("5. A deletes an item; it vanishes on B")
        try await a.delete(fenceID)
        try await a.sync()
        try await b.pull()
        list.check(try await b.table.lookup(id: fenceID) == nil, "\"Paint the fence\" is gone on B (the server kept it soft-deleted for the pull)")

        list.step("6. A changes its passphrase and rotates its data key")
        let before = try await Self.summary(a)
        try await a.close()
        let bytesBefore = try Data(contentsOf: urlA)
        let newPass = try Self.makePassphrase()
        try StoreKeys.changePassphrase(forDatabase: urlA, from: passA, to: newPass, allowInsecureProfile: allowInsecureKeyProfile)
        list.check(try Data(contentsOf: urlA) == bytesBefore, "the passphrase change rewrapped the key only: the database file is byte-identical")
        var oldRefused = false
        do {
            _ = try await TodoDevice.open(store: urlA, encryption: .passphrase(passA), options: reopen, server: server)
        } catch StoreError.wrongPassphrase {
            oldRefused = true
        }
        list.check(oldRefused, "the old passphrase no longer opens A")
        passA = newPass
        let oldKey = try KeyEnvelope.read(from: KeyEnvelope.url(forDatabase: urlA)).unlock(
            passphrase: passA, allowInsecureProfile: allowInsecureKeyProfile)
        let rotation = try StoreKeys.rotateDataKey(forDatabase: urlA, passphrase: passA, allowInsecureProfile: allowInsecureKeyProfile)
        list.say("data key \(rotation.previousKeyId.prefix(8))… replaced by \(rotation.keyId.prefix(8))… (\(rotation.pages) pages re-encrypted)")
        var oldKeyRefused = false
        do {
            _ = try await SQLiteStore.open(at: urlA, encryption: .key(oldKey))
        } catch {
            oldKeyRefused = true
        }
        list.check(oldKeyRefused, "the old data key opens nothing any more")
        a = try await TodoDevice.open(store: urlA, encryption: .passphrase(passA), options: reopen, server: server)
        list.check(try await Self.summary(a) == before, "A reopens with the new passphrase with every item, the queue and the delta token intact")

        list.step("7. The files are encrypted at rest")
        try await a.close()
        try await b.close()
        let texts = ["Buy almond milk", "Buy oat milk", "Call the plumber", "Paint the fence", "todoItem", "allTodoItems"]
        for url in [urlA, urlB] {
            let header = [UInt8](try Data(contentsOf: url).prefix(16))
            list.check(header != Array("SQLite format 3\0".utf8), "\(url.lastPathComponent) does not start with the SQLite header")
        }
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
        var hits: [String] = []
        for file in files {
            let bytes = try Data(contentsOf: file)
            for text in texts where bytes.range(of: Data(text.utf8)) != nil { hits.append("\(file.lastPathComponent): \(text)") }
        }
        list.check(hits.isEmpty, "no item text, table name or query id appears in any of the \(files.count) files on disk")

        output("")
        if list.failures.isEmpty {
            output("Every step held.")
        } else {
            output("\(list.failures.count) step(s) did not hold:")
            for failure in list.failures { output(" - \(failure)") }
        }
        return list.failures.isEmpty
    }

    /// A random passphrase for a demo device (never printed).
    static func makePassphrase() throws -> SecretBytes {
        let random = try SecretBytes.random(count: 18)
        return random.withUnsafeBytes { bytes in
            var text = Array(Data(bytes).base64EncodedString().utf8)
            return SecretBytes(wiping: &text)
        }
    }

    /// Items, queue and delta token of a device, to compare before and after key changes.
    static func summary(_ device: TodoDevice) async throws -> [String] {
        let items = try await device.items(all: true).map { "\($0["id"]?.stringValue ?? "")=\($0["text"]?.stringValue ?? "")" }
        let queue = try await device.context.pendingOperations().map { "\($0.kind)#\($0.itemId)" }
        let token = try await device.store.read { try $0.configValue(forKey: "deltaToken|todoItem|allTodoItems") } ?? "none"
        return items + queue + ["token=\(token)"]
    }
}
