import Foundation
import SyncKeys
import SyncStore
import SyncTestSupport
import SyncWire

/// Unique marker strings written into every table of a store, then searched for in its files.
struct Markers {
    let ascii: [String]
    let unicode: [String]

    init(count: Int = 6) {
        ascii = (0..<count).map { _ in "MARK" + UUID().uuidString.replacingOccurrences(of: "-", with: "") }
        unicode = (0..<count).map { _ in "Märkér-✓-" + UUID().uuidString.prefix(12) }
    }

    var all: [String] { ascii + unicode }

    /// Writes the markers into a user table and all three system tables.
    func fill(_ store: SQLiteStore) async throws {
        let ascii = ascii, unicode = unicode
        try await store.write { w in
            for (i, (a, u)) in zip(ascii, unicode).enumerated() {
                let id = "r\(i)"
                try w.upsert(table: "records", items: [["id": .string(id), "text": .string(a), "note": .string(u)]], ignoreMissingColumns: false)
                let op = try w.addOperation(kind: .delete, table: "records", itemId: id, item: ["id": .string(id), "text": .string(a)])
                try w.addOperationError(
                    OperationErrorRecord(
                        operationId: op.id, operationVersion: 1, kind: .delete, table: "records", itemId: id,
                        statusCode: 412, message: "conflict", item: ["text": .string(u)], serverItem: ["text": .string(a)],
                        rawResponse: a))
                try w.setConfigValue(u, forKey: "deltaToken|records|\(a)")
            }
        }
    }
}

/// The hex of a secret, for feeding a test-only key to an external reader through stdin.
func hex(_ secret: SecretBytes) -> String {
    secret.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
}
