import Foundation
import HTTPTypes
import Logging
import SyncKeys
import SyncServer
import SyncStore
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

@testable import SyncClient

/// A real server on 127.0.0.1 with per-user tables (the token is the user) and two stores of
/// one kind, for attachment tests.
final class AttachmentWorld: Sendable {
    let server: RunningServer
    let stores: [(TestStore, SQLiteStore)]

    private init(server: RunningServer, stores: [(TestStore, SQLiteStore)]) {
        self.server = server
        self.stores = stores
    }

    static func with(_ kind: StoreKind, _ body: (AttachmentWorld) async throws -> Void) async throws {
        var logger = Logger(label: "attachment-sync")
        logger.logLevel = .critical
        let server = try await RunningServer.start(
            ServerConfiguration(port: 0, authentication: .verifier(PerUserPullTests.TokenIsSubject()), perUserTables: .all, logger: logger))
        var stores: [(TestStore, SQLiteStore)] = []
        do {
            for name in ["a.db", "b.db"] { stores.append(try await TestStore.make(kind, name: name)) }
            try await body(AttachmentWorld(server: server, stores: stores))
        } catch {
            Issue.record(error)
        }
        for (test, store) in stores {
            try await store.close()
            test.directory.remove()
        }
        await server.stop()
    }

    /// A context over store `index` for `user`.
    func device(_ index: Int, user: String, url: URL? = nil, transport: any SyncTransport = HTTPSyncTransport()) -> SyncContext {
        SyncContext(
            client: MobileServiceClient(url: url ?? server.url, transport: transport, authenticationToken: { user }), store: stores[index].1)
    }

    /// Alice's first device inserts item `p1` of `photos`, attaches `content` to it and pushes.
    ///
    /// - Returns: The attachment, whose row and content the server holds.
    func pushedAttachment(_ content: [UInt8] = AttachmentSyncTests.content) async throws -> SyncClient.Attachment {
        let device = device(0, user: "alice")
        let table = try device.syncTable("photos")
        try await table.insert(["id": "p1"])
        let attachment = try await table.attach(.bytes(content), to: "p1", name: "porch.jpg", contentType: "image/jpeg")
        try await device.push()
        return attachment
    }

    /// `GET` of an attachment's content on `photos`, as `user`.
    func get(_ id: String, user: String) async throws -> SyncResponse {
        let request = SyncRequest(
            method: .get, url: server.url.appendingPathComponent("tables/photos__attachments/\(id)/content"),
            headers: [WireHeader.apiVersion: WireHeader.apiVersionValue, WireHeader.auth: user, "Accept": "*/*"], body: nil)
        return try await HTTPSyncTransport().send(request)
    }

    /// The bytes of every file under store `index`'s directory.
    func storedFiles(_ index: Int) throws -> [Data] {
        Array(try stores[index].0.directory.contents().values)
    }
}

/// The SHA-256 of `bytes`, lowercase hex.
func digest(_ bytes: [UInt8]) throws -> String {
    var hasher = try SHA256Hasher()
    try hasher.update(bytes)
    return Hex.lowercase(try hasher.finalize())
}

/// The whole of an attachment's content.
func collect(_ content: AttachmentContent) async throws -> [UInt8] {
    var bytes: [UInt8] = []
    for try await chunk in content.bytes() { bytes += chunk }
    return bytes
}

/// A transport that records the offsets of the `PATCH`es it sends, the ranges of the `GET`s and
/// counts the `HEAD`s; with `status`, it answers every `PATCH` so without sending it; with
/// `headsFail`, no `HEAD` gets an answer; `onPatch` and `onGet` run before the n-th `PATCH` or
/// ranged `GET` is sent.
final class PatchRecorder: SyncTransport {
    let base: HTTPSyncTransport
    private let status: Int?
    private let headsFail: Bool
    private let onPatch: @Sendable (Int) -> Void
    private let onGet: @Sendable (Int) -> Void
    private let state = Mutex<(offsets: [Int64], ranges: [String], heads: Int)>(([], [], 0))

    init(
        base: HTTPSyncTransport, status: Int? = nil, headsFail: Bool = false, onPatch: @escaping @Sendable (Int) -> Void = { _ in },
        onGet: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.base = base
        self.status = status
        self.headsFail = headsFail
        self.onPatch = onPatch
        self.onGet = onGet
    }

    struct NoAnswer: Error {}

    var offsets: [Int64] { state.withLock { $0.offsets } }
    var ranges: [String] { state.withLock { $0.ranges } }
    var heads: Int { state.withLock { $0.heads } }

    func send(_ request: SyncRequest) async throws -> SyncResponse {
        switch request.method {
        case .head:
            state.withLock { $0.heads += 1 }
            if headsFail { throw NoAnswer() }
        case .get:
            if let range = request.header("Range") {
                let count = state.withLock { state in
                    state.ranges.append(range)
                    return state.ranges.count
                }
                onGet(count)
            }
        case .patch:
            let count = state.withLock { state in
                state.offsets.append(request.header(WireHeader.uploadOffset).flatMap { Int64($0) } ?? -1)
                return state.offsets.count
            }
            if let status { return SyncResponse(statusCode: status, body: Data(#"{"error":"refused"}"#.utf8)) }
            onPatch(count)
        default:
            break
        }
        return try await base.send(request)
    }
}
