import NIOCore

/// Attachment content in memory, for a server whose tables are in memory: gone when it stops.
actor MemoryAttachmentContent: AttachmentContentStore {
    private var contents: [AttachmentKey: (bytes: [UInt8], complete: Bool)] = [:]
    /// Contents whose removal awaits the outcome of its transaction.
    private var staged: [AttachmentKey: (bytes: [UInt8], complete: Bool)] = [:]

    func held(_ key: AttachmentKey) -> HeldContent {
        contents[key].map { HeldContent(count: Int64($0.bytes.count), complete: $0.complete) } ?? .none
    }

    func append(_ key: AttachmentKey, _ bytes: ByteBuffer, at offset: Int64) throws {
        var content = contents[key] ?? ([], false)
        guard !content.complete, Int64(content.bytes.count) == offset else { throw AttachmentError.offsetMoved(Int64(content.bytes.count)) }
        content.bytes += bytes.readableBytesView
        contents[key] = content
    }

    func flush(_ key: AttachmentKey) {}

    func truncate(_ key: AttachmentKey, to count: Int64) {
        guard var content = contents[key], !content.complete else { return }
        if count == 0 {
            contents[key] = nil
        } else if Int64(content.bytes.count) > count {
            content.bytes.removeLast(content.bytes.count - Int(count))
            contents[key] = content
        }
    }

    func complete(_ key: AttachmentKey) {
        contents[key, default: ([], false)].complete = true
    }

    func read(_ key: AttachmentKey, at offset: Int64, limit: Int) -> ByteBuffer {
        guard let bytes = contents[key]?.bytes, offset < Int64(bytes.count) else { return ByteBuffer() }
        let start = Int(offset)
        return ByteBuffer(bytes: bytes[start..<min(bytes.count, start + limit)])
    }

    func stageRemoval(_ key: AttachmentKey) {
        if let content = contents.removeValue(forKey: key) { staged[key] = content }
    }

    func finishRemoval(_ key: AttachmentKey) {
        staged[key] = nil
    }

    func restoreRemoved(_ key: AttachmentKey) {
        if let content = staged.removeValue(forKey: key) { contents[key] = content }
    }
}
