import Foundation
import HTTPTypes
import Logging
import SyncClient
import SyncServer
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// A user's devices syncing a per-user table the server answers with that user's columns only:
/// a pull brings every value and every `null` the user wrote, never another user's property.
@Suite struct PerUserPullTests {
    /// The `X-ZUMO-AUTH` token is the subject itself (tests only).
    struct TokenIsSubject: IdentityVerifier {
        struct NoToken: Error {}

        func authenticate(headers: HTTPFields) throws -> Identity {
            guard let name = HTTPField.Name(WireHeader.auth), let subject = headers[name], !subject.isEmpty else { throw NoToken() }
            return Identity(subject: subject)
        }
    }

    @Test func aSecondDevicePullsTheUsersOwnValuesAndNullsAndNoOtherUsersProperty() async throws {
        var logger = Logger(label: "per-user-pull")
        logger.logLevel = .critical
        let server = try await RunningServer.start(
            ServerConfiguration(port: 0, authentication: .verifier(TokenIsSubject()), perUserTables: .all, logger: logger))
        let (testA, storeA) = try await TestStore.make(.plain, name: "a.db")
        let (testB, storeB) = try await TestStore.make(.plain, name: "b.db")
        do {
            _ = try await MobileServiceClient(url: server.url) { "bob" }.table("todo").insert(["id": "b1", "bobsMedicalCondition": "flu"])
            let alice = MobileServiceClient(url: server.url) { "alice" }
            let deviceA = SyncContext(client: alice, store: storeA)
            let deviceB = SyncContext(client: alice, store: storeB)
            let (tableA, tableB) = (try deviceA.syncTable("todo"), try deviceB.syncTable("todo"))
            _ = try await tableA.insert(["id": "a1", "text": "milk", "note": "2 litres"])
            _ = try await tableA.insert(["id": "a2", "text": "bread"])
            try await deviceA.push()

            #expect(try await tableB.pull(Query(), queryId: "all") == 2)
            #expect(try await tableB.lookup(id: "a1")?["note"] == "2 litres")
            #expect(try await tableB.lookup(id: "a2")?["text"] == "bread")
            let remote = try await alice.table("todo").read().items
            #expect(remote.count == 2 && remote.allSatisfy { $0["bobsMedicalCondition"] == nil && $0["note"] != nil }, "\(remote)")

            // Alice clears her note on one device: the other pulls the null.
            try await tableA.update(["id": "a1", "text": "milk", "note": .null])
            try await deviceA.push()
            #expect(try await tableB.pull(Query(), queryId: "all") >= 1)
            let a1 = try await tableB.lookup(id: "a1")
            #expect(a1?["note"] == .null && a1?["text"] == "milk" && a1?["bobsMedicalCondition"] == nil, "\(a1 ?? [:])")
        } catch {
            Issue.record(error)
        }
        try await storeA.close()
        try await storeB.close()
        testA.directory.remove()
        testB.directory.remove()
        await server.stop()
    }
}
