import Foundation
import SyncSQL
import SyncSQLite
import SyncWire

/// The items every end-to-end workload moves: about 150 bytes of user data each (a 36-character
/// id, a 96-character text, a Boolean and a small integer), the same for a given index in every
/// run, so the server's seed, the reference insert and the store for `sync-keys` hold equal rows.
enum BenchItems {
    /// The server table the pulls read.
    static let pulledTable = "benchItem"
    /// The server table the pushes write (kept apart, so pushes never change what a pull reads).
    static let pushedTable = "benchPush"
    /// The query id of every incremental pull.
    static let queryId = "bench"

    /// The user columns and the column types the server and the store infer for them.
    static let userColumns: [String: ColumnType] = ["text": .text, "complete": .boolean, "priority": .integer]

    private static let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima",
        "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform", "victor", "whiskey",
    ]

    /// A GUID-shaped id, distinct for each index.
    static func id(_ index: Int) -> String {
        let hex = String(index, radix: 16, uppercase: true)
        let low = String(repeating: "0", count: max(0, 12 - hex.count)) + hex
        return "B3C10000-5EED-4A11-9E00-\(low)"
    }

    /// A 96-character text that differs from item to item.
    static func text(_ index: Int, revision: Int = 0) -> String {
        var state = UInt64(truncatingIfNeeded: index &* 2_654_435_761 &+ revision &* 40_503 &+ 1)
        var text = "item \(index)"
        while text.utf8.count < 96 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            text += " " + words[Int(state >> 33) % words.count]
        }
        return String(text.utf8.prefix(96)) ?? text
    }

    static func complete(_ index: Int) -> Bool { index % 3 == 0 }
    static func priority(_ index: Int) -> Int64 { Int64(index % 5) }

    /// The user part of item `index`, as an app writes it (no id: the sync table makes one).
    static func userItem(_ index: Int) -> JSONObject {
        ["text": .string(text(index)), "complete": .bool(complete(index)), "priority": .int(priority(index))]
    }

    /// A server-style version: 12 random bytes in base64, as `sync-server` makes them.
    static func version() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
    }

    /// The wire text of a millisecond timestamp (`2026-01-01T00:00:00.000Z`).
    static func timestamp(milliseconds: Int64) -> String {
        WireDate.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}

/// Rows as a pull leaves them in a local store, written straight through SQLCipher: the ceiling a
/// pull can approach, and the quick way to fill the store `sync-keys` works on.
enum DirectInsert {
    /// The table a store creates for a pulled item (`id` first, the other columns sorted).
    static let createTable = """
        CREATE TABLE "\(BenchItems.pulledTable)" ("id" TEXT PRIMARY KEY NOT NULL, "complete" BOOLEAN, \
        "createdAt" TEXT, "priority" INTEGER, "text" TEXT, "updatedAt" TEXT, "version" TEXT)
        """
    static let insert = """
        INSERT INTO "\(BenchItems.pulledTable)" ("id", "complete", "createdAt", "priority", "text", "updatedAt", "version") \
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """

    /// The values of rows `indices`, bound in the order of ``insert``.
    static func rows(_ indices: Range<Int>, firstMillisecond: Int64) -> [[SQLValue]] {
        indices.map { i in
            let stamp = BenchItems.timestamp(milliseconds: firstMillisecond + Int64(i))
            return [
                .text(BenchItems.id(i)), .integer(BenchItems.complete(i) ? 1 : 0), .text(stamp), .integer(BenchItems.priority(i)),
                .text(BenchItems.text(i)), .text(stamp), .text(BenchItems.version()),
            ]
        }
    }

    /// Inserts `rows` with one prepared statement in one transaction.
    static func insert(_ rows: [[SQLValue]], into connection: Connection) throws {
        let statement = try connection.prepare(insert)
        try connection.transaction {
            for row in rows { try statement.run(row) }
        }
    }
}
