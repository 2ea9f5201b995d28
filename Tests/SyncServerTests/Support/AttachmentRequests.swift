import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SyncKeys
import SyncServer
import SyncWire

/// Attachments for tests: content, its digest, metadata rows and the content routes' requests.
enum AttachmentFixture {
    /// `count` bytes that differ with `seed`.
    static func content(_ count: Int, seed: Int = 1) -> [UInt8] {
        var generator = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<count).map { _ in
            generator ^= generator << 13
            generator ^= generator >> 7
            generator ^= generator << 17
            return UInt8(truncatingIfNeeded: generator)
        }
    }

    /// The lowercase hex SHA-256 of `bytes`.
    static func digest(_ bytes: [UInt8]) throws -> String {
        var hasher = try SHA256Hasher()
        try hasher.update(bytes)
        return try hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// A metadata row of attachment `id` of item `itemID` for `content`.
    static func row(_ id: String, item itemID: String, content: [UInt8], name: String = "photo.jpg") throws -> JSONObject {
        [
            "id": .string(id), "itemId": .string(itemID), "name": .string(name), "contentType": "image/jpeg",
            "size": .int(Int64(content.count)), "sha256": .string(try digest(content)),
        ]
    }

    /// `headers` with `Upload-Offset` and the upload content type.
    static func upload(_ headers: HTTPFields, offset: Int64) -> HTTPFields {
        var fields = headers
        fields[.contentType] = WireHeader.offsetOctetStream
        if let name = HTTPField.Name(WireHeader.uploadOffset) { fields[name] = String(offset) }
        return fields
    }

    /// `(name, value)` pairs of the upload headers, for the real HTTP client.
    static func uploadPairs(offset: Int64, user: String? = nil) -> [(String, String)] {
        var pairs = [("Content-Type", WireHeader.offsetOctetStream), (WireHeader.uploadOffset, String(offset))]
        if let user { pairs.append((WireHeader.auth, user)) }
        return pairs
    }
}

extension TestServer {
    /// Sends `bytes` (or no body) with `headers`.
    @discardableResult
    func send(_ method: HTTPRequest.Method, _ uri: String, bytes: [UInt8]?, headers: HTTPFields) async throws -> Reply {
        try await client.execute(uri: uri, method: method, headers: headers, body: bytes.map { ByteBuffer(bytes: $0) }) { response in
            Reply(status: response.status, headers: response.headers, body: Data(response.body.readableBytesView))
        }
    }

    /// `PATCH`es `bytes` at `offset` to the content of attachment `id` of `table`'s companion.
    @discardableResult
    func upload(_ table: String, _ id: String, _ bytes: [UInt8], at offset: Int64, headers: HTTPFields = TestServer.version) async throws -> Reply {
        try await send(
            .patch, "/tables/\(table)__attachments/\(id)/content", bytes: bytes, headers: AttachmentFixture.upload(headers, offset: offset))
    }

    /// `HEAD` of the content of attachment `id`.
    func progress(_ table: String, _ id: String, headers: HTTPFields = TestServer.version) async throws -> Reply {
        try await send(.head, "/tables/\(table)__attachments/\(id)/content", bytes: nil, headers: headers)
    }

    /// `GET` of the content of attachment `id`, with `Range` when given.
    func download(_ table: String, _ id: String, range: String? = nil, headers: HTTPFields = TestServer.version) async throws -> Reply {
        var fields = headers
        if let range { fields[.range] = range }
        return try await send(.get, "/tables/\(table)__attachments/\(id)/content", bytes: nil, headers: fields)
    }
}

extension Reply {
    /// The `Upload-Offset` header as a number.
    var uploadOffset: Int64? { HTTPField.Name(WireHeader.uploadOffset).flatMap { headers[$0] }.flatMap { Int64($0) } }
    /// The `Upload-Length` header as a number.
    var uploadLength: Int64? { HTTPField.Name(WireHeader.uploadLength).flatMap { headers[$0] }.flatMap { Int64($0) } }
}
