import Foundation
import SyncStore
import SyncWire

/// Two server items whose ids differ only in ASCII case (`dup` and `DUP`), met by a pull from a
/// backend that compares ids exactly (the Node server of Azure Mobile Apps on SQLite).
///
/// The client names one item per id whatever its ASCII case (as SQL Server and the reference
/// server compare ids), so it holds one of the two: the one the local table had (or, new to
/// it, the first the pull met). The other is left alone: never written over the local row,
/// never deleted because of it, and no push goes to it. Rename one of the two on the server to
/// reach both.
public struct ItemIDCaseClash: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The table of the two items.
    public let table: String
    /// The id of the item the local table holds.
    public let localId: String
    /// The id of the other server item, which the pull left alone.
    public let serverId: String

    /// Creates a clash.
    public init(table: String, localId: String, serverId: String) {
        self.table = table
        self.localId = localId
        self.serverId = serverId
    }

    /// The table and the two ids (ids name items; they are not their values).
    public var description: String {
        "ItemIDCaseClash('\(table)': the local '\(localId)' and the server's '\(serverId)')"
    }
}

/// The clashes a pull met, carried by ``SyncError/itemIDCaseClash`` as its underlying error.
struct ItemIDCaseClashes: Error, Sendable {
    let clashes: [ItemIDCaseClash]
}

extension SyncError {
    /// For ``SyncError/itemIDCaseClash``: the clashes the pull met (empty for other errors).
    public var itemIDCaseClashes: [ItemIDCaseClash] {
        (underlyingError as? ItemIDCaseClashes)?.clashes ?? []
    }
}

extension SyncContext {
    /// The clashes of item ids that pulls met and that still stand (a clash ends when a pull
    /// brings either item deleted, or a force purge of its table), in the order they were met.
    /// They survive restarts.
    /// - Throws: ``SyncError/localStoreFailed``.
    public func itemIDCaseClashes() async throws -> [ItemIDCaseClash] {
        try await read { try ClashRecords.all(in: $0) }
    }
}

/// The standing clashes, one JSON list in the config table (they are rare: a handful at most).
enum ClashRecords {
    static let key = "itemIDCaseClashes"

    static func all(in reader: any SyncRecordsReader) throws -> [ItemIDCaseClash] {
        guard let text = try reader.configValue(forKey: key) else { return [] }
        return (try? JSONCoding.decode([ItemIDCaseClash].self, from: Data(text.utf8))) ?? []
    }

    /// Adds `met` (those not recorded yet) and drops the clashes of `table` that involve an id of
    /// `ended` (an item the pull brought deleted), or every clash of the table when `ended` is nil.
    static func update(table: String, adding met: [ItemIDCaseClash], ending ended: Set<String>?, in writer: any SyncRecordsWriter) throws {
        let stored = try all(in: writer)
        var kept = stored.filter { clash in
            guard clash.table == table else { return true }
            guard let ended else { return false }
            return !ended.contains(clash.localId) && !ended.contains(clash.serverId)
        }
        for clash in met where !kept.contains(clash) { kept.append(clash) }
        guard kept != stored else { return }
        if kept.isEmpty {
            try writer.deleteConfigValue(forKey: key)
        } else {
            try writer.setConfigValue(String(decoding: try JSONCoding.encode(kept), as: UTF8.self), forKey: key)
        }
    }
}
