import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// A local write never sends a change over a version it does not know. Found by the chaos suite
/// (SQLite seeds 50006, 50016 and 50023, at load 130): an app that reads an item, changes it and
/// writes it back raced the push that stored the item's version, or a purge that removed the row;
/// the update or delete then went without `If-Match` and overwrote what the server held.
@Suite struct StaleCopyTests {
    /// The copy an app read before the insert's answer was stored: its system properties are
    /// `null` (the SQLite store returns every column of the table).
    func staleCopy(_ f: ClientFixture, _ id: String) async throws -> JSONObject {
        var copy = try #require(try await f.row(id))
        copy["version"] = .null
        copy["updatedAt"] = .null
        return copy
    }

    enum Write: String, CaseIterable, Sendable {
        case update = "PATCH", delete = "DELETE"
    }

    @Test(arguments: StoreKind.allCases, Write.allCases)
    func aCopyReadBeforeTheInsertWasAnsweredIsWrittenOverTheAnsweredVersion(kind: StoreKind, write: Write) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("a", "created"))
            var copy = try await staleCopy(f, "a")
            f.transport.enqueueEcho(status: 201, version: "1")
            try await f.context.push()
            copy["text"] = "edited"
            switch write {
            case .update:
                try await table.update(copy)
                let row = try #require(try await f.row("a"))
                #expect(row["version"] == "1" && row["text"] == "edited", "\(row)")
                f.transport.enqueueEcho(status: 200, version: "2")
            case .delete:
                try await table.delete(copy)
                f.transport.enqueue(status: 204)
            }
            try await f.context.push()
            let last = try #require(f.transport.requests.last)
            #expect(last.line == "\(write.rawValue) /app/tables/todo/a")
            #expect(last.header("If-Match") == "\"1\"")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anUpdateOrDeleteOfAnItemNotInTheLocalTableNeedsItsVersion(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            // Without a version (the row was purged after the app read it): refused, nothing changes.
            await #expect(throws: SyncError.itemNotFound) { try await table.update(todo("gone", "edited")) }
            await #expect(throws: SyncError.itemNotFound) { try await table.delete(id: "gone") }
            await #expect(throws: SyncError.itemNotFound) { try await table.delete(["id": "gone", "version": .null]) }
            #expect(try await f.row("gone") == nil)
            #expect(try await f.operations().isEmpty)

            // With one: the write goes over that version.
            try await table.update(todo("known", "edited", version: "7"))
            try await table.delete(["id": "other", "version": "8"])
            f.transport.enqueueEcho(status: 200, version: "9")
            f.transport.enqueue(status: 204)
            try await f.context.push()
            let sent = f.transport.requests.map { "\($0.line) \($0.header("If-Match") ?? "none")" }
            #expect(sent == ["PATCH /app/tables/todo/known \"7\"", "DELETE /app/tables/todo/other \"8\""])
        }
    }
}
