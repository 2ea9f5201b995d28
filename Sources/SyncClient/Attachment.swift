public import Foundation
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
    /// then `nil`.
    func withChunks<T>(chunk: Int = 1 << 20, _ body: (() throws -> [UInt8]?) throws -> T) throws -> T {
        switch self {
        case .bytes(let bytes):
            var offset = 0
            return try body {
                guard offset < bytes.count else { return nil }
                let end = min(offset + chunk, bytes.count)
                defer { offset = end }
                return Array(bytes[offset..<end])
            }
        case .file(let url):
            let handle: FileHandle
            do {
                handle = try FileHandle(forReadingFrom: url)
            } catch {
                throw SyncError(.invalidAttachment, reason: "The file \(url.lastPathComponent) cannot be read.", underlying: error)
            }
            defer { try? handle.close() }
            return try body {
                do {
                    guard let data = try handle.read(upToCount: chunk), !data.isEmpty else { return nil }
                    return [UInt8](data)
                } catch {
                    throw SyncError(.invalidAttachment, reason: "The file \(url.lastPathComponent) cannot be read.", underlying: error)
                }
            }
        }
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
    /// temporary file beside it that is renamed once complete.
    ///
    /// - Parameter url: The new file.
    /// - Throws: ``SyncError/invalidAttachment`` when the file exists or cannot be written,
    ///   ``SyncError/attachmentDamaged``; no file is left at `url` then.
    public func export(to url: URL) async throws {
        guard !FileManager.default.fileExists(atPath: url.path) else {
            throw SyncError(.invalidAttachment, reason: "A file exists at \(url.path).")
        }
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).part")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil, attributes: [.posixPermissions: 0o600]),
            let handle = FileHandle(forWritingAtPath: temporary.path)
        else { throw SyncError(.invalidAttachment, reason: "Cannot write in \(url.deletingLastPathComponent().path).") }
        do {
            defer { try? handle.close() }
            for try await chunk in bytes(chunkSize: 1 << 20) { try handle.write(contentsOf: chunk) }
            try handle.synchronize()
            try FileManager.default.moveItem(at: temporary, to: url)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            if let error = error as? SyncError { throw error }
            throw SyncError(.invalidAttachment, reason: "Cannot write \(url.path).", underlying: error)
        }
    }
}

extension SyncError {
    /// The error for a damaged attachment file.
    static func damaged(_ error: any Error) -> SyncError {
        SyncError(.attachmentDamaged, reason: String(describing: error), underlying: error)
    }
}
