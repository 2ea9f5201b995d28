package import Foundation
package import SyncKeys
import SyncWire
import Synchronization

/// Where a store keeps attachment content: the directory `<database>.attachments/` (mode 0700)
/// beside the database, one file per attachment (Keys/FORMAT.md §11). An encrypted store seals
/// each file under its own random key, wrapped under a key derived from the data key; a plain
/// store keeps the content in clear.
///
/// Files are written as the content streams in (never all of it in memory) to a temporary file
/// in the same directory, flushed and renamed; only then does the caller commit the metadata.
/// Safe to share: it holds no state but its directory and its wrapping key.
package final class AttachmentVault: Sendable {
    /// The directory of the attachment files.
    package let directory: URL
    /// The key that wraps attachment keys, while an encrypted store is open; `nil` for a plain
    /// store.
    private let wrappingKey = Mutex<SecretBytes?>(nil)
    /// Whether the store is encrypted (its files are sealed).
    package let isEncrypted: Bool
    /// The files being written or written and not yet settled (their rows not committed yet): a
    /// sweep leaves them alone.
    private let unsettled = Mutex<Set<String>>([])

    init(database: URL, isEncrypted: Bool) {
        directory = URL(fileURLWithPath: database.path + ".attachments", isDirectory: true)
        self.isEncrypted = isEncrypted
    }

    /// Sets the wrapping key from the store's data key (when the store is opened).
    func unlock(dataKey: SecretBytes) throws {
        let key = try StoreKeys.transform { () throws(KeyError) in try AttachmentFormat.wrappingKey(dataKey: dataKey) }
        wrappingKey.withLock { $0 = key }
    }

    /// Forgets the wrapping key (when the store is closed).
    func lock() {
        wrappingKey.withLock { $0 = nil }
    }

    /// The file name of attachment `id` of `table`: 32 hex digits of SHA-256(table 0x00 id) and
    /// `.csat` (sealed) or `.bin` (plain); never the user's file name.
    ///
    /// - Parameters:
    ///   - table: The attachment's table (the item's table).
    ///   - id: The attachment's id.
    /// - Returns: A file name in ``directory``.
    package func fileName(table: String, id: String) -> String {
        let digest = (try? KeyDerivation.sha256(Array(table.utf8) + [0] + Array(id.lowercased().utf8))) ?? []
        return Hex.lowercase(digest.prefix(16)) + (isEncrypted ? ".csat" : ".bin")
    }

    /// Creates the directory (0700) when it is missing.
    func prepareDirectory() throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue { return }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError.fileSystem("Cannot create the attachments directory \(directory.path).")
        }
    }

    /// Writes the content `chunks` yields into the attachment's file: through a temporary file,
    /// flushed and renamed. Computes its size and SHA-256 on the way.
    ///
    /// - Parameters:
    ///   - table: The item's table.
    ///   - id: The attachment's id.
    ///   - chunks: Yields the content in pieces, then `nil` (a piece is written before the next
    ///     is asked for).
    /// - Returns: The file's name, its wrapped key (encrypted stores), the size and the digest.
    /// - Throws: ``StoreError/fileSystem(_:)`` or what `chunks` throws; no file is left behind.
    package func write(table: String, id: String, chunks: () throws -> [UInt8]?) throws -> StagedAttachment {
        let writer = try beginWrite(table: table, id: id)
        do {
            while let chunk = try chunks() { try writer.append(chunk) }
            return try writer.finish()
        } catch {
            writer.discard()
            throw error
        }
    }

    /// Starts the attachment's file: content is then appended piece by piece
    /// (``VaultFileWriter/append(_:)``) and the file committed by ``VaultFileWriter/finish()``.
    ///
    /// - Parameters:
    ///   - table: The item's table.
    ///   - id: The attachment's id.
    /// - Returns: The writer of the file.
    /// - Throws: ``StoreError``.
    package func beginWrite(table: String, id: String) throws -> VaultFileWriter {
        try prepareDirectory()
        let name = fileName(table: table, id: id)
        let temporaryName = ".\(UUID().uuidString.lowercased()).tmp"
        unsettled.withLock { $0.formUnion([name, temporaryName]) }
        do {
            var key: SecretBytes?
            var wrapped: [UInt8]?
            if isEncrypted {
                guard let kek = wrappingKey.withLock({ $0 }) else { throw StoreError.closed }
                let fresh = try AttachmentFormat.newKey()
                wrapped = try KeyWrap.wrap(fresh, using: kek)
                key = fresh
            }
            return try VaultFileWriter(vault: self, table: table, id: id, name: name, temporaryName: temporaryName, key: key, wrapped: wrapped)
        } catch {
            unsettled.withLock { $0.subtract([name, temporaryName]) }
            throw Self.mapped(error)
        }
    }

    /// Reopens the temporary file of a download suspended before (`VaultFileWriter.suspend()`)
    /// to go on appending after the content it kept, which is read back (and, sealed, checked)
    /// to carry on the SHA-256 of the whole content.
    ///
    /// - Parameter partial: The suspended download's row.
    /// - Returns: The writer, its ``VaultFileWriter/size`` the content kept.
    /// - Throws: ``StoreError`` when the file is missing, shorter or damaged, or its key does not
    ///   unwrap (a rotation since): the caller starts again from nothing.
    package func resumeWrite(_ partial: PartialAttachment) throws -> VaultFileWriter {
        // A partial of the other kind (a plain store's, encrypted since) is never resumed.
        guard (partial.wrappedKey != nil) == isEncrypted else { throw StoreError.fileSystem("The suspended download is of another kind.") }
        let name = fileName(table: partial.table, id: partial.id)
        unsettled.withLock { $0.formUnion([name, partial.file]) }
        do {
            var key: SecretBytes?
            if let wrapped = partial.wrappedKey {
                guard let kek = wrappingKey.withLock({ $0 }) else { throw StoreError.closed }
                key = try KeyWrap.unwrap(wrapped, using: kek)
            }
            return try VaultFileWriter(
                vault: self, table: partial.table, id: partial.id, name: name, temporaryName: partial.file, key: key, wrapped: partial.wrappedKey,
                resumingAt: partial.length)
        } catch {
            unsettled.withLock { $0.subtract([name, partial.file]) }
            throw Self.mapped(error)
        }
    }

    /// The store's error for a failure of a file or a key.
    static func mapped(_ error: any Error) -> any Error {
        if let error = error as? AttachmentFileError { return StoreError.fileSystem("Cannot write the attachment file: \(error.description)") }
        if let error = error as? KeyError { return StoreError.keyMaterialCorrupt(error.description) }
        return error
    }

    /// Forgets a temporary file name once its writer has ended (or its partial row is committed).
    package func release(_ names: [String]) {
        unsettled.withLock { $0.subtract(names) }
    }

    /// Ends the life of a file written by ``write(table:id:chunks:)``: its row committed, or (when
    /// `committed` is false) it is removed.
    ///
    /// - Parameters:
    ///   - staged: The written file.
    ///   - committed: Whether its row was committed.
    package func settle(_ staged: StagedAttachment, committed: Bool) {
        if !committed { remove(files: [staged.file]) }
        unsettled.withLock { _ = $0.remove(staged.file) }
    }

    /// Opens the file of a recorded attachment for reading.
    ///
    /// - Parameter record: The attachment's row of `__attachments`.
    /// - Returns: A reader of its content.
    /// - Throws: `AttachmentFileError` for a missing, damaged or foreign file.
    package func open(_ record: AttachmentFileRecord) throws -> any AttachmentFileContent {
        let url = directory.appendingPathComponent(record.file)
        guard let wrapped = record.wrappedKey else { return try PlainAttachmentFile(url: url) }
        guard let kek = wrappingKey.withLock({ $0 }) else { throw AttachmentFileError.keyUnavailable }
        guard let key = try? KeyWrap.unwrap(wrapped, using: kek) else { throw AttachmentFileError.keyUnavailable }
        return try AttachmentFileReader(url: url, key: key)
    }

    /// Removes attachment files (missing ones are not an error).
    ///
    /// - Parameter files: File names in ``directory``.
    package func remove(files: [String]) {
        for file in files { _ = try? FileManager.default.removeItem(at: directory.appendingPathComponent(file)) }
    }

    /// Removes every file of the directory that is not among `kept` (temporary files left by a
    /// crash, files of attachments whose row was never committed or is gone).
    ///
    /// - Parameter kept: The file names the store's rows name.
    /// - Returns: The names removed.
    @discardableResult
    func sweep(keeping kept: Set<String>) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        let busy = unsettled.withLock { $0 }
        let stale = names.filter { !kept.contains($0) && !busy.contains($0) }
        remove(files: stale)
        return stale
    }
}

/// The writer of one attachment file (``AttachmentVault/beginWrite(table:id:)``): sealed or plain,
/// hashed as it goes. Use from one task at a time.
package final class VaultFileWriter {
    private let vault: AttachmentVault
    private let table: String
    private let id: String
    private let name: String
    private let temporaryName: String
    private let sealed: AttachmentFileWriter?
    private let plain: RawFile?
    private var hasher: SHA256Hasher?
    private let wrapped: [UInt8]?
    /// The content bytes appended so far.
    package private(set) var size: Int64 = 0

    fileprivate init(
        vault: AttachmentVault, table: String, id: String, name: String, temporaryName: String, key: SecretBytes?, wrapped: [UInt8]?
    ) throws {
        self.vault = vault
        self.table = table
        self.id = id
        self.name = name
        self.temporaryName = temporaryName
        self.wrapped = wrapped
        hasher = try SHA256Hasher()
        let temporary = vault.directory.appendingPathComponent(temporaryName)
        if let key {
            sealed = try AttachmentFileWriter(temporaryURL: temporary, key: key)
            plain = nil
        } else {
            sealed = nil
            plain = try RawFile.create(temporary)
        }
    }

    /// A writer that goes on after the `length` content bytes a suspended writer kept in
    /// `temporaryName`: they are read back into the SHA-256 first.
    fileprivate init(
        vault: AttachmentVault, table: String, id: String, name: String, temporaryName: String, key: SecretBytes?, wrapped: [UInt8]?,
        resumingAt length: Int64
    ) throws {
        self.vault = vault
        self.table = table
        self.id = id
        self.name = name
        self.temporaryName = temporaryName
        self.wrapped = wrapped
        var hasher = try SHA256Hasher()
        let temporary = vault.directory.appendingPathComponent(temporaryName)
        if let key {
            sealed = try AttachmentFileWriter(resuming: temporary, key: key, kept: length) {
                (plain) throws(AttachmentFileError) in
                do { try hasher.update(plain) } catch { throw .io("SHA-256") }
            }
            plain = nil
        } else {
            let reader = try RawFile.openForReading(temporary)
            guard try reader.size() >= length else { throw AttachmentFileError.truncated }
            var offset: Int64 = 0
            while offset < length {
                let chunk = try reader.read(at: offset, count: Int(min(1 << 20, length - offset)))
                defer { SecretBytes.wipe(contentsOf: chunk) }
                try hasher.update(chunk)
                offset += Int64(chunk.count)
            }
            sealed = nil
            plain = try RawFile.openForAppending(temporary, truncatingTo: length)
        }
        self.hasher = consume hasher
        size = length
    }

    /// Stops writing and keeps what is safely on disk at the temporary path: in an encrypted store
    /// the full sealed segments (never the plaintext of the segment under way), in a plain store
    /// every byte; flushed. The caller records it (``AttachmentRows/savePartial(_:)``), then
    /// releases its name (``AttachmentVault/release(_:)``).
    ///
    /// - Returns: The suspended download, or `nil` when nothing was kept (the file is removed).
    package func suspend() -> PartialAttachment? {
        do {
            let kept: Int64
            if let sealed {
                kept = try sealed.suspend()
            } else if let plain {
                try plain.syncAndClose()
                kept = size
            } else {
                return nil
            }
            _ = hasher.take()
            guard kept > 0 else {
                discard()
                return nil
            }
            return PartialAttachment(table: table, id: id, file: temporaryName, wrappedKey: wrapped, length: kept)
        } catch {
            discard()
            return nil
        }
    }

    /// Appends content.
    ///
    /// - Throws: ``StoreError``.
    package func append(_ bytes: [UInt8]) throws {
        do {
            try hasher?.update(bytes)
            if let sealed { try sealed.write(bytes) } else { try plain?.append(bytes) }
            size += Int64(bytes.count)
        } catch {
            throw AttachmentVault.mapped(error)
        }
    }

    /// Flushes the file, renames it to its name and flushes the directory.
    ///
    /// - Returns: The written file, for its row to be committed (then ``AttachmentVault/settle(_:committed:)``).
    /// - Throws: ``StoreError``; the temporary file is removed.
    package func finish() throws -> StagedAttachment {
        let final = vault.directory.appendingPathComponent(name)
        let temporary = vault.directory.appendingPathComponent(temporaryName)
        defer { vault.release([temporaryName]) }
        do {
            if let sealed {
                try sealed.commit(to: final)
            } else if let plain {
                try plain.syncAndClose()
                try RawFile.rename(temporary, to: final)
                try RawFile.syncDirectory(of: final)
            }
            guard let hasher = hasher.take() else { throw KeyError.cryptoFailure("SHA-256") }
            let digest = try hasher.finalize()
            return StagedAttachment(
                table: table, id: id, file: name, wrappedKey: wrapped, size: size, sha256: Hex.lowercase(digest))
        } catch {
            discard()
            throw AttachmentVault.mapped(error)
        }
    }

    /// Removes the file (temporary or renamed) and forgets it.
    package func discard() {
        let temporary = vault.directory.appendingPathComponent(temporaryName)
        sealed?.discard()
        plain?.remove(temporary)
        vault.remove(files: [temporaryName, name])
        vault.release([temporaryName, name])
    }
}

/// An attachment file written and flushed, whose row is not committed yet.
package struct StagedAttachment: Sendable, Hashable {
    /// The item's table.
    package var table: String
    /// The attachment's id.
    package var id: String
    /// The file's name in the vault.
    package var file: String
    /// The attachment key wrapped under the store's attachment wrapping key (encrypted stores).
    package var wrappedKey: [UInt8]?
    /// The content length.
    package var size: Int64
    /// The content's SHA-256, lowercase hex.
    package var sha256: String
}

/// A download suspended midway (`VaultFileWriter.suspend()`): a row of the store's system table
/// `__attachment_partials` naming its temporary file, its wrapped key and the content it holds.
package struct PartialAttachment: Sendable, Hashable {
    /// The item's table.
    package var table: String
    /// The attachment's id.
    package var id: String
    /// The temporary file's name in the vault.
    package var file: String
    /// The attachment key, wrapped (encrypted stores).
    package var wrappedKey: [UInt8]?
    /// The content bytes the file holds (whole sealed segments in an encrypted store).
    package var length: Int64
}

/// Content of an attachment file, read at any offset: the sealed reader or a plain file.
package protocol AttachmentFileContent: Sendable {
    /// The content length.
    var contentLength: Int64 { get }
    /// Up to `count` content bytes from `offset` (fewer only at the end).
    func read(at offset: Int64, count: Int) throws(AttachmentFileError) -> [UInt8]
    /// Checks the whole file (every tag of a sealed file).
    func verify() throws(AttachmentFileError)
}

extension AttachmentFileReader: AttachmentFileContent {}

/// A plain store's attachment file: the content in clear.
final class PlainAttachmentFile: AttachmentFileContent {
    private let file: RawFile
    let contentLength: Int64

    init(url: URL) throws(AttachmentFileError) {
        file = try RawFile.openForReading(url)
        contentLength = try file.size()
    }

    func read(at offset: Int64, count: Int) throws(AttachmentFileError) -> [UInt8] {
        guard offset >= 0, count > 0, offset < contentLength else { return [] }
        return try file.read(at: offset, count: Int(min(Int64(count), contentLength - offset)))
    }

    func verify() throws(AttachmentFileError) {}
}
