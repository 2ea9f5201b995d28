import Foundation
import SyncKeys
import SyncSQL
import SyncSQLite

/// The attachment keys of a store's `__attachments` table (Keys/FORMAT.md §11) in its key
/// maintenance: a rotation rewraps them in the re-encrypted copy before that copy replaces the
/// database; encrypting a plain store seals its attachment files and records their keys there; a
/// verification checks every file's tag chain.
enum AttachmentKeys {
    /// The attachment directory of a database.
    static func directory(of database: URL) -> URL {
        URL(fileURLWithPath: database.path + ".attachments", isDirectory: true)
    }

    /// Whether the database behind `connection` has the attachments table.
    static func hasTable(_ connection: Connection) throws -> Bool {
        try connection.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '__attachments'")?.integerValue == 1
    }

    /// Rewraps every attachment key of the database copy at `copy` (keyed with `newDataKey`) from
    /// the wrapping key of `oldDataKey` to that of `newDataKey`, in one transaction, and checks
    /// that each unwraps under the new one. Suspended downloads are forgotten (their next attempt
    /// starts from nothing; the store's sweep removes their files).
    ///
    /// - Returns: The keys rewrapped.
    /// - Throws: ``StoreError/verificationFailed(_:)`` for a key that does not unwrap.
    static func rewrap(copy: URL, oldDataKey: SecretBytes, newDataKey: SecretBytes) throws -> Int {
        let connection = try newDataKey.withUnsafeBytes { try Connection.open(path: copy.path, mode: .readWrite, key: $0) }
        defer { connection.close() }
        guard try hasTable(connection) else { return 0 }
        let (oldKEK, newKEK) = try StoreKeys.transform { () throws(KeyError) in
            (try AttachmentFormat.wrappingKey(dataKey: oldDataKey), try AttachmentFormat.wrappingKey(dataKey: newDataKey))
        }
        return try connection.transaction {
            let rows = try connection.rows("SELECT rowid, wrappedKey FROM \"__attachments\" WHERE wrappedKey IS NOT NULL")
            for row in rows {
                guard case .blob(let wrapped) = row[1], let key = try? KeyWrap.unwrap(wrapped, using: oldKEK) else {
                    throw StoreError.verificationFailed("an attachment key does not unwrap under the old data key")
                }
                let rewrapped = try StoreKeys.transform { () throws(KeyError) in try KeyWrap.wrap(key, using: newKEK) }
                guard (try? KeyWrap.unwrap(rewrapped, using: newKEK)) == key else {
                    throw StoreError.verificationFailed("a rewrapped attachment key does not unwrap")
                }
                try connection.execute("UPDATE \"__attachments\" SET wrappedKey = ? WHERE rowid = ?", [.blob(rewrapped), row[0]])
            }
            _ = try forgetPartials(connection)
            return rows.count
        }
    }

    /// Seals the plain attachment files of a store being encrypted: each `.bin` file the copy's
    /// rows name is written sealed under a new key as `.csat` (through a temporary file, flushed),
    /// and its row updated with the new name and the wrapped key, in one transaction of the copy.
    ///
    /// Suspended plain downloads are forgotten, their files wiped with the others.
    ///
    /// - Returns: The plain files replaced (to wipe once the copy has replaced the database).
    static func seal(copy: URL, database: URL, dataKey: SecretBytes) throws -> [URL] {
        let connection = try dataKey.withUnsafeBytes { try Connection.open(path: copy.path, mode: .readWrite, key: $0) }
        defer { connection.close() }
        guard try hasTable(connection) else { return [] }
        let kek = try StoreKeys.transform { () throws(KeyError) in try AttachmentFormat.wrappingKey(dataKey: dataKey) }
        let directory = directory(of: database)
        return try connection.transaction {
            var plain: [URL] = []
            for row in try connection.rows("SELECT rowid, file FROM \"__attachments\" WHERE wrappedKey IS NULL") {
                guard let name = row[1].textValue else { continue }
                let source = directory.appendingPathComponent(name)
                let sealedName = (name.hasSuffix(".bin") ? String(name.dropLast(4)) : name) + ".csat"
                let wrapped = try sealFile(source, to: directory.appendingPathComponent(sealedName), kek: kek)
                try connection.execute(
                    "UPDATE \"__attachments\" SET file = ?, wrappedKey = ? WHERE rowid = ?", [.text(sealedName), .blob(wrapped), row[0]])
                plain.append(source)
            }
            return plain + (try forgetPartials(connection)).map { directory.appendingPathComponent($0) }
        }
    }

    /// Deletes the rows of suspended downloads (`__attachment_partials`), when the table exists.
    ///
    /// - Returns: The names of their files.
    private static func forgetPartials(_ connection: Connection) throws -> [String] {
        let exists = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '__attachment_partials'"
        guard try connection.scalar(exists)?.integerValue == 1 else { return [] }
        let files = try connection.rows("SELECT file FROM \"__attachment_partials\"").compactMap { $0[0].textValue }
        try connection.execute("DELETE FROM \"__attachment_partials\"")
        return files
    }

    /// Writes the content of the plain file `source` sealed under a new key to `destination`;
    /// returns the key wrapped under `kek`.
    private static func sealFile(_ source: URL, to destination: URL, kek: SecretBytes) throws -> [UInt8] {
        do {
            let key = try AttachmentFormat.newKey()
            let wrapped = try KeyWrap.wrap(key, using: kek)
            let input = try RawFile.openForReading(source)
            let size = try input.size()
            let writer = try AttachmentFileWriter(
                temporaryURL: destination.deletingLastPathComponent().appendingPathComponent(".\(UUID().uuidString.lowercased()).tmp"), key: key)
            var offset: Int64 = 0
            while offset < size {
                let chunk = try input.read(at: offset, count: 1 << 20)
                guard !chunk.isEmpty else { break }
                try writer.write(chunk)
                offset += Int64(chunk.count)
            }
            try writer.commit(to: destination)
            return wrapped
        } catch let error as AttachmentFileError {
            throw StoreError.fileSystem("An attachment file cannot be encrypted: \(error.description)")
        }
    }

    /// Overwrites each file with zeros, flushes it and removes it (missing files are passed over).
    static func wipe(_ files: [URL]) {
        for file in files {
            if let handle = FileHandle(forUpdatingAtPath: file.path) {
                let size = (try? handle.seekToEnd()) ?? 0
                try? handle.seek(toOffset: 0)
                var left = size
                while left > 0 {
                    let step = min(left, 1 << 20)
                    try? handle.write(contentsOf: Data(count: Int(step)))
                    left -= step
                }
                try? handle.synchronize()
                try? handle.close()
            }
            try? FileManager.default.removeItem(at: file)
        }
    }

    /// Opens every attachment file the database names and checks it whole (every segment's tag,
    /// in order).
    ///
    /// - Returns: The attachments checked, and a sentence for each one that fails.
    static func verify(connection: Connection, database: URL, dataKey: SecretBytes?) throws -> (checked: Int, problems: [String]) {
        guard try hasTable(connection) else { return (0, []) }
        let kek = try dataKey.map { key in try StoreKeys.transform { () throws(KeyError) in try AttachmentFormat.wrappingKey(dataKey: key) } }
        let directory = directory(of: database)
        var problems: [String] = []
        let rows = try connection.rows("SELECT tableName, attachmentId, file, wrappedKey FROM \"__attachments\" ORDER BY tableName, attachmentId")
        for row in rows {
            let label = "attachment \(row[1].textValue ?? "?") of \(row[0].textValue ?? "?")"
            let url = directory.appendingPathComponent(row[2].textValue ?? "")
            guard case .blob(let wrapped) = row[3] else {
                if kek != nil {
                    problems.append("\(label): no key")
                } else if !FileManager.default.fileExists(atPath: url.path) {
                    problems.append("\(label): the file is missing")
                }
                continue
            }
            guard let kek, let key = try? KeyWrap.unwrap(wrapped, using: kek) else {
                problems.append("\(label): its key does not unwrap")
                continue
            }
            do {
                try AttachmentFileReader(url: url, key: key).verify()
            } catch {
                problems.append("\(label): \(error.description)")
            }
        }
        return (rows.count, problems)
    }
}
