import Foundation
import SyncStore
import SyncWire
import Synchronization

/// Whether a push sends several operations of one table in one request: the batch extension of
/// the reference server (docs/server.md, "The batch extension").
public enum PushBatching: Sendable, Hashable {
    /// One request per operation (the default, and the only way of the protocol itself).
    case off
    /// Batches of consecutive operations of one table when the server advertises the extension
    /// (`GET /capabilities`, asked once per context); one request per operation otherwise, and
    /// always while a ``SyncConflictHandler`` is set (it sees each operation's own request).
    /// Batches go one after the other, in queue order, pipelined: the next ones are claimed and
    /// written while one is at the server, and the next is sent when its answer arrives. Large
    /// batches start smaller (a quarter of the server's limit, at least 256 operations) and
    /// double up to the limit.
    case automatic
}

/// What a server advertises of the batch extension (``SyncContext/serverBatchCapability()``).
public struct BatchCapability: Sendable, Hashable {
    /// The most operations one batch may carry.
    public let maxOperations: Int
    /// The largest request body the server takes, in bytes, when it says.
    public let maxBytes: Int?
}

extension SyncContext {
    /// Sets whether later pushes send batches.
    /// - Parameter batching: ``PushBatching/automatic`` to batch where the server can.
    public func setPushBatching(_ batching: PushBatching) {
        pushBatching = batching
    }

    /// The most operations a push sends in one batch, whatever a server advertises: a push keeps
    /// up to three batches claimed at once (one at the server, two ready), so this bounds the
    /// operations and rows it holds (measured with the reference server, batches beyond a few
    /// hundred operations gain little).
    public static let maximumBatchOperations = 1_000

    /// The most operations a push may send in one request: the server's advertised limit (at
    /// most ``maximumBatchOperations``), asked for once (with the largest body it takes,
    /// ``advertisedBatchBytes``, when it says); 1 when batching is off, a conflict handler is set
    /// or the server has no batches.
    /// - Throws: ``SyncError/transportFailed`` (or a cancellation) when the server could not be asked.
    func batchLimit(run: RunHandle) async throws -> Int {
        guard pushBatching == .automatic, conflictHandler == nil else { return 1 }
        if let advertisedBatchLimit { return advertisedBatchLimit }
        let capability = try await batchCapability(run: run)
        let limit = capability.map { min($0.maxOperations, Self.maximumBatchOperations) } ?? 1
        if let bytes = capability?.maxBytes { advertisedBatchBytes = bytes }
        advertisedBatchLimit = limit
        return limit
    }

    /// Asks the server what it advertises of the batch extension (`GET /capabilities`), whatever
    /// the context's ``PushBatching``: for an app or tool that shows it.
    /// - Returns: the server's batch limits, or `nil` when it takes no batches (any answer but a
    ///   200 to `/capabilities`, no `batch` in it, or a limit of one operation).
    /// - Throws: ``SyncError/transportFailed`` when the server cannot be reached,
    ///   ``SyncError/cancelled``.
    public func serverBatchCapability() async throws -> BatchCapability? {
        try await batchCapability(run: nil)
    }

    private func batchCapability(run: RunHandle?) async throws -> BatchCapability? {
        let request = try connection.request(.get, url: try connection.url(["capabilities"]), features: [.offline])
        let response = try await connection.send(request, run: run)
        guard response.statusCode == 200, let capabilities = ServiceConnection.item(from: response),
            case .object(let batch)? = capabilities["batch"], let most = batch["maxOperations"]?.intValue, most > 1
        else { return nil }
        let bytes = batch["maxBytes"]?.intValue.flatMap { $0 > 0 ? Int(clamping: $0) : nil }
        return BatchCapability(maxOperations: Int(clamping: most), maxBytes: bytes)
    }

    /// Classifies the reply to the batch request of `group` (consecutive operations of one table,
    /// each with its item) as ``pushOne(_:connection:run:answer:)`` classifies a single answer.
    /// - Parameter reply: The response to the batch request, or why there is none.
    /// - Returns: one outcome per operation in order; ``PushMachine/Landing/unsupported`` when the server
    ///   has no batch route (send them one at a time); ``PushMachine/Landing/tooLarge`` when the body was
    ///   larger than the server takes (send them in smaller batches: each alone, an operation too
    ///   large by itself gets its own 413); a single abort when no result can be read (no answer,
    ///   a 401, a cancelled push, an unreadable answer): every operation of the group stays
    ///   attempted and the next push settles them.
    func batchOutcome(_ group: [ClaimedOperation], reply: Result<SyncResponse, any Error>, run: RunHandle) async -> PushMachine.Landing {
        let response: SyncResponse
        switch reply {
        case .success(let answer): response = answer
        case .failure(let error): return .answered([.abort(Self.requestAbort(error))])
        }
        switch response.statusCode {
        case 404, 405:
            advertisedBatchLimit = 1
            return .unsupported
        case 413:
            return .tooLarge
        case 401:
            return .answered([.abort(SyncError.pushRefusedSignIn)])
        case 200:
            guard let answers = Self.batchAnswers(response), answers.count == group.count else {
                return .answered([.abort(SyncError(.pushAbortedByNetwork, reason: "The server's batch answer could not be read."))])
            }
            var outcomes: [Outcome] = []
            outcomes.reserveCapacity(group.count)
            for (claimed, answer) in zip(group, answers) {
                outcomes.append(await pushOne(claimed, connection: connection, run: run, answer: answer))
            }
            return .answered(outcomes)
        default:
            // The batch as a whole was refused or failed: each operation had that answer.
            var outcomes: [Outcome] = []
            let answer = BatchAnswer(response: response, item: ServiceConnection.item(from: response))
            for claimed in group { outcomes.append(await pushOne(claimed, connection: connection, run: run, answer: answer)) }
            return .answered(outcomes)
        }
    }

    /// `POST /batch/{table}` with `{"operations": [...]}`: each operation as its own request
    /// would carry it (method, id, body, `If-Match`), written straight into the body's text.
    func batchRequest(_ group: [ClaimedOperation]) throws -> SyncRequest {
        let body = try ServiceConnection.encoded {
            var body = JSONBuilder()
            body.openObject()
            body.member("operations")
            body.openArray()
            for claimed in group {
                let record = claimed.record
                body.openObject()
                body.member("method")
                switch record.kind {
                case .insert: body.value("POST")
                case .update: body.value("PATCH")
                case .delete: body.value("DELETE")
                }
                if record.kind != .insert {
                    body.member("id")
                    body.value(record.itemId)
                    if let version = claimed.item?[SystemProperty.version]?.stringValue {
                        body.member("ifMatch")
                        body.value(ETag.quote(version))
                    }
                }
                if record.kind != .delete {
                    body.member("item")
                    body.openObject()
                    body.member(SystemProperty.id)
                    body.value(record.itemId)
                    try body.members(of: claimed.item ?? [:], omitting: PushOperation.isOmittedFromBody)
                    body.closeObject()
                }
                body.closeObject()
            }
            body.closeArray()
            body.closeObject()
            return body.data
        }
        let url = try connection.url(["batch", group.first?.record.table ?? ""])
        return try connection.request(.post, url: url, data: body, features: [.untypedTable, .offline])
    }

    /// Each result of a batch answer as the response its own request would have had (status,
    /// `ETag`, JSON body), its body read once: an item is carried as it was parsed (a success's
    /// body bytes are not written again; a refusal keeps them for its error record); `nil` when
    /// the answer is not of that form.
    private static func batchAnswers(_ response: SyncResponse) -> [BatchAnswer]? {
        guard let answer = try? JSONCoding.decode(JSONObject.self, from: response.body), case .array(let results)? = answer["results"] else {
            return nil
        }
        var answers: [BatchAnswer] = []
        answers.reserveCapacity(results.count)
        for result in results {
            guard case .object(let result) = result, let status = result["status"]?.intValue, (100..<600).contains(status) else { return nil }
            var headers: [String: String] = [:]
            let etag = result["etag"]?.stringValue
            if let etag { headers[WireHeader.eTag] = etag }
            var item: JSONObject?
            if case .object(var object)? = result["body"] {
                if let etag, let version = ETag.version(from: etag) { object[SystemProperty.version] = .string(version) }
                item = object
            }
            var body = Data()
            if let content = result["body"], !content.isNull, item == nil || !(200..<300).contains(status) {
                guard let encoded = try? JSONCoding.encode(content) else { return nil }
                body = encoded
            }
            answers.append(BatchAnswer(response: SyncResponse(statusCode: Int(status), headers: headers, body: body), item: item))
        }
        return answers
    }
}

/// One result of a batch answer: the response the operation's own request would have had, and
/// its body as an item, read once.
struct BatchAnswer: Sendable {
    /// Status, `ETag` and body (a success's item is carried in ``item`` only).
    let response: SyncResponse
    /// The body's JSON object with a strong `ETag` as its version; `nil` when the body is empty
    /// or not an object.
    let item: JSONObject?
}

/// A batch's request handed to the push's sender, with the turn it belongs to.
struct HandedBatch: Sendable {
    let request: SyncRequest
    let turn: Int
}

/// What the sender did with a handed batch.
enum BatchReply: Sendable {
    /// Sent: the response, or why there is none.
    case sent(Result<SyncResponse, any Error>)
    /// Not sent: its turn had ended.
    case notSent
}

/// The turn the sender sends batches of; the push begins a new one when it takes batches back.
final class BatchTurn: Sendable {
    private let value = Atomic<Int>(0)

    var current: Int { value.load(ordering: .acquiring) }

    func advance() { value.add(1, ordering: .releasing) }
}

/// The push's side of the pipeline: the replies to the batches handed to the sender, which
/// come in the order they were handed, and the sender's turn.
struct BatchPipeline {
    var replies: AsyncStream<BatchReply>.Iterator
    let turn: BatchTurn

    init(replies: AsyncStream<BatchReply>.Iterator, turn: BatchTurn) {
        self.replies = replies
        self.turn = turn
    }

    /// The reply to the oldest batch handed (read on the push's actor).
    mutating func nextReply(isolation: isolated (any Actor)? = #isolation) async -> BatchReply {
        await replies.next(isolation: isolation) ?? .notSent
    }

    /// Ends the turn: the sender sends none of the batches handed and not sent yet; those
    /// handed from here are sent.
    func endTurn() {
        turn.advance()
    }
}
