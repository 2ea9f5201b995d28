import Foundation
import SyncClient
import SyncWire
import Synchronization

/// A transport that writes every table and batch request it sends, and the answer it got, to the
/// history log (method, path, `If-Match`, the JSON bodies; never a header that carries a token).
/// The change stream passes through unrecorded.
struct RecordingTransport: SyncStreamingTransport {
    let base: HTTPSyncTransport
    let log: HistoryLog
    /// One numbering for the whole process: a device makes a new transport each time it opens its
    /// store again, and its history needs each request's number once.
    private static let counter = Counter()

    func send(_ request: SyncRequest) async throws -> SyncResponse {
        let number = Self.counter.next()
        let path = request.url.path
        let recorded = path.contains("/tables/") || path.contains("/batch/")
        if recorded {
            var fields: JSONObject = [
                "req": .int(number), "method": .string(request.method.rawValue), "path": .string(path),
                "query": .string(request.url.query ?? ""),
            ]
            if let ifMatch = request.header("If-Match") { fields["ifMatch"] = .string(ifMatch) }
            if let body = request.body, let value = try? JSONParser.parse(body) { fields["body"] = value }
            log.write("send", fields)
        }
        do {
            let response = try await base.send(request)
            if recorded {
                var fields: JSONObject = ["req": .int(number), "status": .int(Int64(response.statusCode))]
                if let etag = response.header("ETag") { fields["etag"] = .string(etag) }
                if let value = try? JSONParser.parse(response.body) { fields["body"] = value }
                log.write("recv", fields)
            }
            return response
        } catch {
            if recorded { log.write("fail", ["req": .int(number), "error": .string("\(error)")]) }
            throw error
        }
    }

    func openStream(_ request: SyncRequest) async throws -> SyncStreamResponse {
        try await base.openStream(request)
    }
}

/// A thread-safe counter of requests.
private final class Counter: Sendable {
    private let value = Mutex<Int64>(0)

    func next() -> Int64 {
        value.withLock { value in
            value += 1
            return value
        }
    }
}
