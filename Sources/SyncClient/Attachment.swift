public import Foundation
import SyncKeys
import SyncStore
import SyncWire

/// An attachment's metadata: a row of the companion table `T__attachments` of the item's table
/// `T`, synced like any item. The content is kept by the local store (encrypted in an encrypted
/// store) and transferred separately.
public struct Attachment: Sendable, Hashable, Codable {
    /// The attachment's id (a UUID; the content never changes for an id).
    public var id: String
    /// The id of the item it belongs to.
    public var itemId: String
    /// The file name shown to the user (1–255 characters, no `/` or NUL).
    public var name: String
    /// The content type, e.g. `image/jpeg`.
    public var contentType: String
    /// The content length in bytes.
    public var size: Int64
    /// The content's SHA-256, lowercase hex.
    public var sha256: String

    /// The metadata of a row of `T__attachments`, or `nil` when the row lacks a property.
    init?(row: JSONObject) {
        guard let id = row["id"]?.stringValue, let itemId = row["itemId"]?.stringValue, let name = row["name"]?.stringValue,
            let contentType = row["contentType"]?.stringValue, let size = row["size"]?.intValue, let sha256 = row["sha256"]?.stringValue
        else { return nil }
        self.init(id: id, itemId: itemId, name: name, contentType: contentType, size: size, sha256: sha256)
    }

    init(id: String, itemId: String, name: String, contentType: String, size: Int64, sha256: String) {
        self.id = id
        self.itemId = itemId
        self.name = name
        self.contentType = contentType
        self.size = size
        self.sha256 = sha256
    }

    /// The row's user properties.
    var row: JSONObject {
        [
            "id": .string(id), "itemId": .string(itemId), "name": .string(name), "contentType": .string(contentType),
            "size": .int(size), "sha256": .string(sha256),
        ]
    }

    /// A reference to this attachment, for a typed model to carry.
    public var reference: AttachmentReference { AttachmentReference(id: id, name: name) }

    /// Whether `name` can name an attachment: 1–255 characters, no `/` and no NUL.
    ///
    /// - Parameter name: A file name.
    /// - Returns: `true` when it is valid.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 255 && !name.contains("/") && !name.unicodeScalars.contains("\0")
    }
}

/// A reference to an attachment that a `Codable` model can carry in one of its properties (it
/// encodes as a small JSON object, `{"id": …, "name": …}`); resolve it with
/// ``SyncTable/attachment(id:)``.
public struct AttachmentReference: Sendable, Hashable, Codable {
    /// The attachment's id.
    public var id: String
    /// Its file name when the reference was made.
    public var name: String

    /// A reference.
    ///
    /// - Parameters:
    ///   - id: The attachment's id.
    ///   - name: Its file name.
    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// Where an attachment's content comes from.
public enum AttachmentInput: Sendable {
    /// The bytes of a file, read as it is written (never all of it in memory).
    case file(URL)
    /// Bytes in memory.
    case bytes([UInt8])

    /// Calls `body` with a function that yields the content in pieces of at most `chunk` bytes,
    /// then `nil`. Each piece is a copy of its own (never the caller's array, never a `Data`),
    /// wiped when the next one is asked for and the last when `body` returns: the caller is done
    /// with a piece by then.
    func withChunks<T>(chunk: Int = 1 << 20, _ body: (() throws -> [UInt8]?) throws -> T) throws -> T {
        let size = max(1, chunk)
        var descriptor: Int32 = -1
        if case .file(let url) = self {
            descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw Self.unreadable(url) }
        }
        defer { if descriptor >= 0 { close(descriptor) } }
        var handed: [UInt8] = []
        defer { SecretBytes.wipe(contentsOf: handed) }
        var offset = 0
        return try body {
            SecretBytes.wipe(contentsOf: handed)
            handed = []
            switch self {
            case .bytes(let bytes):
                guard offset < bytes.count else { return nil }
                let end = min(offset + size, bytes.count)
                handed = [UInt8](unsafeUninitializedCapacity: end - offset) { buffer, count in
                    count = buffer.initialize(fromContentsOf: bytes[offset..<end])
                }
                offset = end
            case .file(let url):
                handed = try Self.read(descriptor, upTo: size, of: url)
            }
            return handed.isEmpty ? nil : handed
        }
    }

    /// Up to `size` bytes of the file open at `descriptor` (fewer only at its end).
    private static func read(_ descriptor: Int32, upTo size: Int, of url: URL) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        var filled = 0
        while filled < size {
            let count = bytes.withUnsafeMutableBytes { raw in Foundation.read(descriptor, raw.baseAddress.map { $0 + filled }, size - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                SecretBytes.wipe(contentsOf: bytes)
                throw unreadable(url)
            }
            if count == 0 { break }
            filled += count
        }
        bytes.removeLast(size - filled)
        return bytes
    }

    private static func unreadable(_ url: URL) -> SyncError {
        SyncError(.invalidAttachment, reason: "The file \(url.lastPathComponent) cannot be read.")
    }
}

/// The content of a local attachment: read it at any offset, as a stream of chunks, or export it
/// to a file. An encrypted store decrypts (and authenticates) one segment at a time.
public struct AttachmentContent: AttachmentContentSource {
    let file: any AttachmentFileContent
    /// The content length in bytes.
    public var size: Int64 { file.contentLength }

    /// Up to `count` bytes from `offset` (fewer only at the end).
    ///
    /// - Throws: ``SyncError/attachmentDamaged`` when the file fails its check.
    public func read(at offset: Int64, count: Int) async throws -> [UInt8] {
        do {
            return try file.read(at: offset, count: count)
        } catch {
            throw SyncError.damaged(error)
        }
    }

    /// The content in chunks of `chunkSize` bytes, in order.
    ///
    /// - Parameter chunkSize: The bytes per chunk (default 64 KiB).
    /// - Returns: A stream that ends after the last byte, or with ``SyncError/attachmentDamaged``.
    public func bytes(chunkSize: Int = 1 << 16) -> AsyncThrowingStream<[UInt8], any Error> {
        let file = file
        var offset: Int64 = 0
        let step = max(chunkSize, 1)
        return AsyncThrowingStream {
            guard offset < file.contentLength else { return nil }
            do {
                let chunk = try file.read(at: offset, count: step)
                offset += Int64(chunk.count)
                return chunk
            } catch {
                throw SyncError.damaged(error)
            }
        }
    }

    /// Writes the content to a new file at `url` (refused when a file exists there), through a
    /// temporary file beside it that is renamed once complete. Each chunk of plaintext is wiped
    /// from memory once written.
    ///
    /// - Parameter url: The new file.
    /// - Throws: ``SyncError/invalidAttachment`` when the file exists or cannot be written,
    ///   ``SyncError/attachmentDamaged``; no file is left at `url` then.
    public func export(to url: URL) async throws {
        guard !FileManager.default.fileExists(atPath: url.path) else {
            throw SyncError(.invalidAttachment, reason: "A file exists at \(url.path).")
        }
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).part")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SyncError(.invalidAttachment, reason: "Cannot write in \(url.deletingLastPathComponent().path).") }
        do {
            defer { close(descriptor) }
            for try await chunk in bytes(chunkSize: 1 << 20) {
                defer { SecretBytes.wipe(contentsOf: chunk) }
                try Self.write(chunk, to: descriptor)
            }
            guard fsync(descriptor) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            try FileManager.default.moveItem(at: temporary, to: url)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            if let error = error as? SyncError { throw error }
            throw SyncError(.invalidAttachment, reason: "Cannot write \(url.path).", underlying: error)
        }
    }
}

extension AttachmentContent {
    /// Writes all of `bytes` to `descriptor`.
    fileprivate static func write(_ bytes: [UInt8], to descriptor: Int32) throws {
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeBytes { raw in Foundation.write(descriptor, raw.baseAddress.map { $0 + done }, raw.count - done) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            done += count
        }
    }
}

extension SyncError {
    /// The error for a damaged attachment file.
    static func damaged(_ error: any Error) -> SyncError {
        SyncError(.attachmentDamaged, reason: String(describing: error), underlying: error)
    }
}
