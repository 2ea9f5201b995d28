import Hummingbird
import NIOCore
import SyncKeys
import SyncWire

/// The offsets protocol of attachment content over one ``AttachmentContentStore``: appends at
/// the offset the store holds, refuses what would go beyond the size, checks the SHA-256 of the
/// complete content, and reads content back in bounded chunks. A body is never held whole: it
/// goes to the store in chunks of ``chunkBytes`` as it arrives.
struct AttachmentUploads: Sendable {
    let store: any AttachmentContentStore
    /// The uploads running in this server (one per attachment at a time).
    let running: RunningUploads
    /// The most bytes kept in memory per upload or download before they go on.
    static let chunkBytes = 256 * 1024

    /// Appends `body` at `offset` to the content of `key` and completes it once `size` bytes are
    /// there and their SHA-256 is `digest`.
    ///
    /// A body cut short keeps the bytes that arrived (the upload resumes after them). A refused
    /// body (beyond `size`) changes nothing.
    ///
    /// - Parameters:
    ///   - declaredLength: The body's `Content-Length`, when the request has one.
    /// - Returns: The offset afterwards.
    /// - Throws: ``AttachmentError`` (409 for another offset or a complete content, 413 beyond
    ///   the size, 422 for another digest); the body's or the store's error.
    func upload(
        _ key: AttachmentKey, offset: Int64, size: Int64, digest: String, declaredLength: Int64?, body: RequestBody
    ) async throws -> Int64 {
        let held = try await store.held(key)
        guard await running.start(key) else { throw AttachmentError.busy(held.count) }
        do {
            let position = try await append(key, held: held, offset: offset, size: size, digest: digest, declaredLength: declaredLength, body: body)
            await running.end(key)
            return position
        } catch {
            await running.end(key)
            throw error
        }
    }

    private func append(
        _ key: AttachmentKey, held: HeldContent, offset: Int64, size: Int64, digest: String, declaredLength: Int64?, body: RequestBody
    ) async throws -> Int64 {
        if held.complete { throw AttachmentError.complete(size) }
        guard offset == held.count else { throw AttachmentError.offsetMoved(held.count) }
        if let declaredLength, declaredLength > size - offset { throw AttachmentError.beyondSize(size) }
        var position = offset
        var pending = ByteBuffer()
        do {
            for try await buffer in body {
                guard position + Int64(pending.readableBytes + buffer.readableBytes) <= size else {
                    try await store.truncate(key, to: offset)
                    throw AttachmentError.beyondSize(size)
                }
                pending.writeImmutableBuffer(buffer)
                if pending.readableBytes >= Self.chunkBytes {
                    try await store.append(key, pending, at: position)
                    position += Int64(pending.readableBytes)
                    pending.clear()
                }
            }
        } catch let error as AttachmentError {
            throw error
        } catch {
            // The body was cut: what arrived stays, and the upload resumes after it.
            if pending.readableBytes > 0 { try await store.append(key, pending, at: position) }
            try await store.flush(key)
            throw error
        }
        if pending.readableBytes > 0 {
            try await store.append(key, pending, at: position)
            position += Int64(pending.readableBytes)
        }
        try await store.flush(key)
        if position == size {
            guard try await self.digest(key, size: size) == digest else {
                try await store.truncate(key, to: 0)
                throw AttachmentError.digestMismatch
            }
            try await store.complete(key)
        }
        return position
    }

    /// The lowercase hex SHA-256 of the first `size` bytes held of `key`, read in chunks.
    func digest(_ key: AttachmentKey, size: Int64) async throws -> String {
        var hasher = try SHA256Hasher()
        var offset: Int64 = 0
        while offset < size {
            let chunk = try await store.read(key, at: offset, limit: Self.chunkBytes)
            guard chunk.readableBytes > 0 else { break }
            try chunk.withUnsafeReadableBytes { try hasher.update($0) }
            offset += Int64(chunk.readableBytes)
        }
        return Hex.lowercase(try hasher.finalize())
    }

    /// Writes bytes `range` of the content of `key` to `writer`, a chunk at a time.
    func send(_ key: AttachmentKey, _ range: ClosedRange<Int64>, to writer: inout any ResponseBodyWriter) async throws {
        var offset = range.lowerBound
        while offset <= range.upperBound {
            let limit = Int(min(Int64(Self.chunkBytes), range.upperBound - offset + 1))
            let chunk = try await store.read(key, at: offset, limit: limit)
            guard chunk.readableBytes > 0 else { throw ContentVanished() }
            try await writer.write(chunk)
            offset += Int64(chunk.readableBytes)
        }
    }

    /// The content ended before the bytes its row promises (removed while it was sent).
    struct ContentVanished: Error {}
}

/// The attachments uploading in one server.
actor RunningUploads {
    private var keys: Set<AttachmentKey> = []

    func start(_ key: AttachmentKey) -> Bool { keys.insert(key).inserted }
    func end(_ key: AttachmentKey) { keys.remove(key) }
}
