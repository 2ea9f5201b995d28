public protocol AttachmentContentSource: Sendable {
    var size: Int64 { get }
    /// Up to `count` plaintext bytes starting at `offset` (fewer only at the end).
    func read(at offset: Int64, count: Int) async throws -> [UInt8]
}
public protocol AttachmentContentSink: Sendable {
    /// Bytes at `offset` (always the current end: downloads append in order).
    func write(_ bytes: [UInt8], at offset: Int64) async throws
    /// All bytes written; SHA-256 matched. The sink makes the content visible now.
    func finish() async throws
}
