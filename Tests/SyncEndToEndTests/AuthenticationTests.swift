import Foundation
import Logging
import SyncClient
import SyncServer
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// A server that requires an `X-ZUMO-AUTH` token, and a client whose token comes from the app.
@Suite struct AuthenticationTests {
    /// The token the app holds; the test changes it as a sign-in would.
    final class Session: @unchecked Sendable {
        private let lock = NSLock()
        private var current: String?
        var token: String? {
            get { lock.withLock { current } }
            set { lock.withLock { current = newValue } }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aPushWithoutAValidTokenAbortsAndKeepsTheQueueThenSucceedsOnceSignedIn(_ kind: StoreKind) async throws {
        var logger = Logger(label: "auth")
        logger.logLevel = .critical
        let secret = ItemID.generate()
        let server = try await RunningServer.start(ServerConfiguration(port: 0, authentication: .sharedToken(secret), logger: logger))
        let (test, store) = try await TestStore.make(kind)
        let session = Session()
        let client = MobileServiceClient(url: server.url) { session.token }
        let context = SyncContext(client: client, store: store)
        let table = try context.syncTable("todo")
        do {
            _ = try await table.insert(["text": "signed", "done": false])
            // What the queue holds (its state says the push was attempted, which may change).
            func queue() async throws -> [String] {
                try await context.pendingOperations().map { "\($0.id) \($0.kind) \($0.itemId) \($0.version)" }
            }
            let queued = try await queue()

            // The last: the right token, then CR LF and a header of its own (nothing is sent).
            for token in [nil, "not-" + secret, secret + "x", secret + "\r\nX-ZUMO-AUTH: " + secret] {
                session.token = token
                await #expect(throws: SyncError.pushAbortedByAuthentication) { try await context.push() }
                #expect(try await queue() == queued, "the operation stays queued, untouched")
                #expect(try await context.operationErrors().isEmpty)
                await #expect(throws: SyncError.authenticationRequired) { try await client.table("todo").read() }
            }

            session.token = secret
            try await context.push()
            #expect(try await context.pendingOperationsCount == 0)
            #expect(try await client.table("todo").read().items.map { $0["text"] } == ["signed"])
            #expect(try await table.pull(Query(), queryId: "all") == 1)
        } catch {
            Issue.record(error)
        }
        try? await store.close()
        test.directory.remove()
        await server.stop()
    }

    @Test func aTokenProviderThatFailsSendsNothing() async throws {
        let (test, store) = try await TestStore.make(.plain)
        defer { test.directory.remove() }
        struct NoSignIn: Error {}
        let transport = FakeSyncTransport()
        let url = try #require(URL(string: "https://sync.example.test/app"))
        let client = MobileServiceClient(url: url, transport: transport) { throw NoSignIn() }
        let context = SyncContext(client: client, store: store)
        _ = try await context.syncTable("todo").insert(["text": "x"])
        await #expect(throws: SyncError.pushAbortedByAuthentication) { try await context.push() }
        #expect(transport.requests.isEmpty)
        #expect(try await context.pendingOperationsCount == 1)
        try await store.close()
    }
}
