import Foundation
@_spi(Testing) import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

@testable import SyncClient

/// The rule that decides whether the server's copy holds what was sent (the SyncClient article "The offline flow, with conflicts": "A crash during
/// a push creates no conflict"), case by case; and the checkpoints a crash test can stop at.
@Suite struct ServerCopyRuleTests {
    static let sent: JSONObject = ["id": "a-1", "text": "milk", "count": 1, "price": 1.5, "done": false, "tags": ["x", 2], "note": nil]

    /// The server's copy, as it would come back, with the sent values unless changed.
    static func copy(_ changes: JSONObject = [:], removing: [String] = []) -> JSONObject {
        var copy = sent
        copy["version"] = "v2"
        copy["createdAt"] = "2001-01-01T00:00:00.000Z"
        copy["updatedAt"] = "2001-01-01T00:00:00.000Z"
        copy["deleted"] = false
        for name in removing { copy[name] = nil }
        copy.merge(changes) { _, new in new }
        return copy
    }

    static let equal: [(String, JSONObject)] = [
        ("as sent, with the system properties", copy()),
        ("the id in another ASCII case", copy(["id": "A-1"])),
        ("a name in another ASCII case", copy(["Text": "milk"], removing: ["text"])),
        ("1 as 1.0, 1.5 as 1.5", copy(["count": 1.0])),
        ("a null sent and absent on the server", copy(removing: ["note"])),
        ("a null column the client never sent", copy(["addedElsewhere": nil])),
        ("other system values, any case", copy(["VERSION": "zz", "Deleted": true, "updatedat": "2020-01-01T00:00:00.000Z"])),
        ("nested numbers by value", copy(["tags": ["x", 2.0]])),
    ]

    static let different: [(String, JSONObject)] = [
        ("another value", copy(["text": "oat milk"])),
        ("text compares exactly", copy(["text": "Milk"])),
        ("a sent value missing", copy(removing: ["count"])),
        ("a non-null column the client never sent", copy(["addedElsewhere": "x"])),
        ("a Boolean is not a number", copy(["done": 0])),
        ("a number is not a string", copy(["count": "1"])),
        ("arrays in order", copy(["tags": [2, "x"]])),
        ("another id", copy(["id": "a-2"])),
        ("a null that has a value", copy(["note": "set"])),
    ]

    @Test(arguments: equal.indices)
    func aCopyThatHoldsWhatWasSent(_ index: Int) {
        let (label, server) = Self.equal[index]
        #expect(PushAnswer.holds(Self.sent, in: server), "\(label)")
    }

    @Test(arguments: different.indices)
    func aCopyThatDiffers(_ index: Int) {
        let (label, server) = Self.different[index]
        #expect(!PushAnswer.holds(Self.sent, in: server), "\(label)")
    }

    @Test(arguments: StoreKind.allCases)
    func theCheckpointsComeInOrder(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let seen = Mutex<[SyncCheckpoint]>([])
            let context = SyncContext(client: f.client, store: f.store, checkpoint: { step in seen.withLock { $0.append(step) } })
            let table = try context.syncTable("todo")
            try await table.insert(todo("a", "one"))
            try await table.insert(todo("b", "two"))
            f.transport.enqueueEcho()
            f.transport.enqueueEcho()
            f.transport.enqueuePage([serverItem("c", "three")])
            f.transport.enqueuePage([])
            try await table.pull()
            #expect(seen.withLock { $0 } == [.pushClaimed, .pushSent, .pushClaimed, .pushSent, .pullPage])
            #expect(SyncCheckpoint.allCases.map(\.rawValue) == ["push-claimed", "push-sent", "pull-page"])
        }
    }
}
