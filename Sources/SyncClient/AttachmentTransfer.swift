import Foundation
import SyncKeys
import SyncWire

/// Moves the content of attachments between the app's side (an ``AttachmentContentSource`` or
/// ``AttachmentContentSink``) and the server's content routes, over the client's transport and
/// authentication (docs/protocol.md, "Attachments").
///
/// An upload asks `HEAD` for the offset the server holds and sends the rest in `PATCH` chunks of
/// ``chunkBytes``; after a network failure or a 5xx it waits (``AttachmentRetry``) and asks the
/// offset again, so it resumes where the server's content ends, never from the start. A download
/// reads the content by `Range` in chunks of ``chunkBytes``, hashes it as it goes, and calls the
/// sink's `finish()` only when the SHA-256 of the whole content is the server's `ETag`. Neither
/// holds more than one chunk in memory.
struct AttachmentTransfer: Sendable {
    let connection: ServiceConnection
    /// The most bytes one request carries (a `PATCH` body, a ranged `GET`'s answer): 1 MiB.
    var chunkBytes: Int
    /// When and how often a failed request is tried again.
    var retry: AttachmentRetry

    init(client: MobileServiceClient, chunkBytes: Int = 1 << 20, retry: AttachmentRetry = AttachmentRetry()) {
        self.connection = client.connection
        self.chunkBytes = max(1, chunkBytes)
        self.retry = retry
    }

    /// What the server holds of one attachment's content.
    struct Progress: Sendable, Hashable {
        /// The bytes held.
        var offset: Int64
        /// The content's length (the row's `size`).
        var length: Int64
        /// The content's SHA-256 (lowercase hex), once it is complete.
        var digest: String?
    }

    // MARK: upload

    /// Uploads the content of attachment `attachmentID` (whose row the server has) from `source`,
    /// resuming at the offset the server holds.
    ///
    /// - Parameters:
    ///   - table: The item's table (the attachment's row is in its companion table).
    ///   - size: The content's length, as the row says.
    ///   - sha256: The content's SHA-256, lowercase hex, as the row says.
    /// - Throws: ``SyncError/attachmentDigestMismatch`` when the server found another digest (it
    ///   discarded the content); ``SyncError/missingOnServer`` when the row is not there (or not
    ///   the caller's); ``SyncError/invalidItem`` when the source is shorter than `size`;
    ///   ``SyncError/transportFailed`` or ``SyncError/requestFailed`` (a 5xx) once the retries are
    ///   spent; ``SyncError/authenticationRequired``; ``SyncError/cancelled``.
    func upload(table: String, attachmentID: String, size: Int64, sha256: String, source: some AttachmentContentSource) async throws {
        let url = try contentURL(table, attachmentID)
        var known: Int64?
        var confirmed: Int64 = -1
        var failures = 0
        while true {
            do {
                let offset: Int64
                if let known {
                    offset = known
                } else {
                    let progress = try await progress(url)
                    if let digest = progress.digest {
                        guard digest == sha256 else {
                            throw SyncError(.attachmentDigestMismatch, reason: "The server's content has another SHA-256.")
                        }
                        return
                    }
                    offset = progress.offset
                    // Progress (a lost answer's chunk the server kept) starts the count again.
                    if offset > confirmed { (confirmed, failures) = (offset, 0) }
                }
                let count = Int(min(Int64(chunkBytes), max(0, size - offset)))
                let bytes = count > 0 ? try await source.read(at: offset, count: count) : []
                guard bytes.count == count else { throw SyncError(.invalidItem, reason: "The attachment's content is shorter than its size.") }
                var request = try connection.request(.patch, url: url, data: Data(bytes), features: [])
                request.headers["Content-Type"] = WireHeader.offsetOctetStream
                request.headers[WireHeader.uploadOffset] = String(offset)
                let response = try await connection.send(request)
                switch response.statusCode {
                case 204:
                    let next = try Self.offset(of: response)
                    if next >= size { return }
                    (known, confirmed, failures) = (next, next, 0)
                case 409:
                    // The server holds another offset: go on from it. The same offset means
                    // another request still uploads this content (one cut a moment ago): wait.
                    let held = try? Self.offset(of: response)
                    if held == offset {
                        failures += 1
                        guard failures < retry.attempts else { throw Self.error(for: response) }
                        try await retry.wait(afterFailures: failures)
                    }
                    known = held
                case 422:
                    throw SyncError(.attachmentDigestMismatch, reason: "The server found another SHA-256 and discarded the content.", statusCode: 422)
                default:
                    throw Self.error(for: response)
                }
            } catch let error as SyncError where retry.allows(error) && failures + 1 < retry.attempts {
                failures += 1
                known = nil
                try await retry.wait(afterFailures: failures)
            }
        }
    }

    // MARK: download

    /// Downloads the complete content of attachment `attachmentID` into `sink`, from `offset` on
    /// (the bytes before it are the sink's already), and finishes the sink once it is all there
    /// and verified.
    ///
    /// The SHA-256 checked covers every byte this call receives; from offset 0 it is the whole
    /// content's and must be the server's `ETag`. From another offset the prefix cannot be hashed
    /// here, so the sink must have verified its own bytes; the server's `ETag` must still be the
    /// same at every request (content is immutable per id).
    ///
    /// - Throws: ``SyncError/attachmentDigestMismatch`` when the bytes do not hash to the `ETag`
    ///   (`finish()` is not called); ``SyncError/missingOnServer`` when the row is not there, not
    ///   the caller's, or its content is not complete; the errors of ``upload(table:attachmentID:size:sha256:source:)``
    ///   for the network; what the sink throws.
    func download(table: String, attachmentID: String, from offset: Int64 = 0, sink: some AttachmentContentSink) async throws {
        let url = try contentURL(table, attachmentID)
        var failures = 0
        var progress: Progress?
        while progress == nil {
            do {
                progress = try await self.progress(url)
            } catch let error as SyncError where retry.allows(error) && failures + 1 < retry.attempts {
                failures += 1
                try await retry.wait(afterFailures: failures)
            }
        }
        guard let progress, let digest = progress.digest else {
            throw SyncError(.missingOnServer, reason: "The attachment's content is not complete on the server.", statusCode: 404)
        }
        var hasher = try SHA256Hasher()
        var position = max(0, offset)
        failures = 0
        while position < progress.length {
            do {
                let last = min(progress.length, position + Int64(chunkBytes)) - 1
                var request = try connection.request(.get, url: url, data: nil, features: [])
                request.headers["Accept"] = "*/*"
                request.headers["Range"] = "bytes=\(position)-\(last)"
                let response = try await connection.send(request)
                guard response.statusCode == 206 || response.statusCode == 200 else { throw Self.error(for: response) }
                guard response.header(WireHeader.eTag).flatMap(ETag.version(from:)) == digest else {
                    throw SyncError(.attachmentDigestMismatch, reason: "The server's content changed during the download.")
                }
                var bytes = [UInt8](response.body)
                if response.statusCode == 200 { bytes = Array(bytes.dropFirst(Int(position)).prefix(Int(last - position + 1))) }
                guard !bytes.isEmpty else { throw SyncError(.malformedServerResponse, reason: "The server sent no content.") }
                try await sink.write(bytes, at: position)
                try hasher.update(bytes)
                position += Int64(bytes.count)
                failures = 0
            } catch let error as SyncError where retry.allows(error) && failures + 1 < retry.attempts {
                failures += 1
                try await retry.wait(afterFailures: failures)
            }
        }
        if offset <= 0 {
            guard Hex.lowercase(try hasher.finalize()) == digest else {
                throw SyncError(.attachmentDigestMismatch, reason: "The downloaded content's SHA-256 is not the server's.")
            }
        }
        try await sink.finish()
    }

    // MARK: requests

    /// `HEAD`: what the server holds.
    func progress(_ url: URL) async throws -> Progress {
        let response = try await connection.send(try connection.request(.head, url: url, data: nil, features: []))
        guard response.statusCode == 200 else { throw Self.error(for: response) }
        guard let length = response.header(WireHeader.uploadLength).flatMap({ Int64($0) }) else {
            throw SyncError(.malformedServerResponse, reason: "The server's answer has no Upload-Length.")
        }
        return Progress(offset: try Self.offset(of: response), length: length, digest: response.header(WireHeader.eTag).flatMap(ETag.version(from:)))
    }

    private func contentURL(_ table: String, _ attachmentID: String) throws -> URL {
        guard TableName.isValid(table) else { throw SyncError.notATableName() }
        guard ItemID.isValid(attachmentID) else { throw SyncError(.invalidItemID, reason: "Not a valid attachment id.") }
        return try connection.url(["tables", TableName.attachments(of: table), attachmentID, "content"])
    }

    private static func offset(of response: SyncResponse) throws -> Int64 {
        guard let offset = response.header(WireHeader.uploadOffset).flatMap({ Int64($0) }), offset >= 0 else {
            throw SyncError(.malformedServerResponse, reason: "The server's answer has no Upload-Offset.")
        }
        return offset
    }

    /// The error of an answer: 404 is ``SyncError/missingOnServer`` (a missing row, another
    /// user's, an incomplete content), the others as every request's.
    private static func error(for response: SyncResponse) -> SyncError {
        guard response.statusCode != 404 else {
            return SyncError(.missingOnServer, reason: "The server has no such attachment content.", statusCode: 404)
        }
        return ServiceConnection.error(for: response)
    }
}

/// When a failed request of an ``AttachmentTransfer`` is tried again: after a network failure
/// or a 5xx answer, up to ``attempts`` tries of one step in all, waiting ``firstDelay``, then
/// twice as long each time up to ``longestDelay``. Any progress starts the count again.
struct AttachmentRetry: Sendable {
    /// The most tries of one step.
    var attempts = 6
    /// The wait after the first failure.
    var firstDelay: Duration = .milliseconds(200)
    /// The longest wait.
    var longestDelay: Duration = .seconds(5)
    /// How a wait is made (tests record them).
    var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    /// The wait after `failures` failures in a row.
    func delay(afterFailures failures: Int) -> Duration {
        var delay = firstDelay
        for _ in 1..<max(1, failures) where delay < longestDelay { delay *= 2 }
        return min(delay, longestDelay)
    }

    func wait(afterFailures failures: Int) async throws {
        do {
            try await sleep(delay(afterFailures: failures))
        } catch {
            throw SyncError(.cancelled, underlying: error)
        }
    }

    /// Whether `error` is worth another try: no answer arrived, or the server answered 5xx.
    func allows(_ error: SyncError) -> Bool {
        error == .transportFailed || (error == .requestFailed && (error.statusCode ?? 0) >= 500)
    }
}
