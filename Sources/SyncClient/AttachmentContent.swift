/// The content of an attachment as an upload reads it: the plaintext bytes, by offset.
public protocol AttachmentContentSource: Sendable {
    /// The content's length in bytes.
    var size: Int64 { get }
    /// Up to `count` plaintext bytes starting at `offset` (fewer only at the end).
    func read(at offset: Int64, count: Int) async throws -> [UInt8]
}

/// Where a download writes an attachment's content, in order.
public protocol AttachmentContentSink: Sendable {
    /// Bytes at `offset` (always the current end: downloads append in order).
    func write(_ bytes: [UInt8], at offset: Int64) async throws
    /// All bytes written; SHA-256 matched. The sink makes the content visible now.
    func finish() async throws
}
