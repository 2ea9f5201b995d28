import Foundation
import SyncStore
import SyncWire

/// The store steps of a pull: one transaction per page, and a second one for a page with items
/// spelled otherwise than the local table holds their id (which the server settles first).
///
/// Ids fold ASCII case (one local row per folded id), but a backend that compares ids exactly
/// can hold `dup` and `DUP` as two items. They are never merged into one row: two live
/// spellings of one id in a page are a clash (the local table keeps its own spelling, or the
/// first); a pulled spelling that differs from the local row's is applied only once the server
/// says whether the row's spelling is the same item (a server that folds case), gone (the row
/// is replaced), or another live item (a clash).
enum PullSteps {
    /// What applying a page did.
    struct Applied: Sendable {
        /// The positions in the page of the items written or deleted, in order.
        var positions: [Int] = []
        /// Items spelled otherwise than their id's local row, not applied yet.
        var unsettled: [Unsettled] = []
        /// Two live server items of one folded id: the second is left alone.
        var clashes: [ItemIDCaseClash] = []
    }

    /// A page's items of one spelling, whose id's local row is spelled otherwise.
    struct Unsettled: Sendable {
        /// The local row's spelling.
        let stored: String
        /// The pulled spelling.
        let spelling: String
        var positions: [Int]
    }

    /// What the server holds under the local row's spelling.
    enum Verdict: Sendable {
        /// The row's item itself, spelled the server's way (a server that folds ASCII case): the
        /// pulled items apply to the row as usual.
        case sameItem
        /// Nothing live: the row is replaced by the pulled item, spelled the server's way.
        case staleRow
        /// Another live item: the pulled one is left alone (a clash, when it is live).
        case clash
    }

    /// Applies a page: items without a valid id are ignored, items with a pending operation are
    /// skipped (the local edit wins until pushed; ids match whatever their ASCII case),
    /// `deleted: true` items are deleted locally and the others upserted in one batch (the store
    /// keeps no `deleted` flag); then the delta token is saved, if it advanced — unless items are
    /// left unsettled: ``settle(_:of:table:token:in:)`` saves it once they are.
    static func apply(
        _ page: PullPage, table: String, token: (key: String, milliseconds: Int64)?, in writer: any SyncRecordsWriter
    ) throws -> Applied {
        let pending = Set(try writer.operations(table: table).map { ItemID.key($0.itemId) })
        var groups: [String: [Int]] = [:]  // positions by folded id, in page order
        var order: [String] = []
        for (position, item) in page.items.enumerated() {
            guard let id = id(of: item), ItemID.isValid(id) else { continue }
            let key = ItemID.key(id)
            if !pending.isEmpty, pending.contains(key) { continue }
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(position)
        }
        var stored: [String: String] = [:]
        let firstIds = order.compactMap { groups[$0]?.first.flatMap { id(of: page.items[$0]) } }
        if !firstIds.isEmpty {
            for row in try writer.lookup(table: table, ids: firstIds) { if let id = id(of: row) { stored[ItemID.key(id)] = id } }
        }
        var changes = Changes()
        var applied = Applied()
        for key in order {
            guard let positions = groups[key] else { continue }
            plan(positions, of: page, stored: stored[key], table: table, into: &changes, &applied)
        }
        try changes.write(table: table, clashes: applied.clashes, in: writer)
        if let token, applied.unsettled.isEmpty { try writer.setConfigValue(DeltaToken.text(milliseconds: token.milliseconds), forKey: token.key) }
        applied.positions = changes.positions.sorted()
        return applied
    }

    /// Applies the items left unsettled by ``apply(_:table:token:in:)`` as the server's
    /// `verdicts` have them, then saves the token, if it advanced.
    static func settle(
        _ verdicts: [(Unsettled, Verdict)], of page: PullPage, table: String, token: (key: String, milliseconds: Int64)?,
        in writer: any SyncRecordsWriter
    ) throws -> Applied {
        let pending = Set(try writer.operations(table: table).map { ItemID.key($0.itemId) })
        var changes = Changes()
        var clashes: [ItemIDCaseClash] = []
        for (unsettled, verdict) in verdicts where !pending.contains(ItemID.key(unsettled.stored)) {
            switch verdict {
            case .sameItem:
                for position in unsettled.positions { changes.add(page.items[position], at: position) }
            case .staleRow:
                changes.deletes.append(unsettled.stored)
                for position in unsettled.positions { changes.add(page.items[position], at: position, deletingRow: false) }
            case .clash:
                for position in unsettled.positions {
                    if PushAnswer.isDeleted(page.items[position]) {
                        changes.ended.insert(unsettled.spelling)
                    } else {
                        clashes.append(ItemIDCaseClash(table: table, localId: unsettled.stored, serverId: unsettled.spelling))
                    }
                }
            }
        }
        try changes.write(table: table, clashes: clashes, in: writer)
        if let token { try writer.setConfigValue(DeltaToken.text(milliseconds: token.milliseconds), forKey: token.key) }
        var distinct: [ItemIDCaseClash] = []
        for clash in clashes where !distinct.contains(clash) { distinct.append(clash) }
        return Applied(positions: changes.positions.sorted(), clashes: distinct)
    }

    /// Plans the items of one folded id (`positions`), given the local row's spelling.
    private static func plan(
        _ positions: [Int], of page: PullPage, stored: String?, table: String, into changes: inout Changes, _ applied: inout Applied
    ) {
        var live: [String] = []  // the live spellings, in page order
        for position in positions where !PushAnswer.isDeleted(page.items[position]) {
            if let id = id(of: page.items[position]), !live.contains(id) { live.append(id) }
        }
        let kept = stored.flatMap { live.contains($0) ? $0 : nil } ?? live.first
        if let kept {
            for other in live where other != kept {
                applied.clashes.append(ItemIDCaseClash(table: table, localId: kept, serverId: other))
            }
        }
        var row = stored  // the spelling of the local row, as the planned changes leave it
        var keptPositions: [Int] = []
        for position in positions {
            let item = page.items[position]
            guard let id = id(of: item) else { continue }
            if let kept, id == kept {
                keptPositions.append(position)
            } else if !PushAnswer.isDeleted(item) {
                continue  // a live clash: left alone
            } else if id == row {
                changes.add(item, at: position)  // the row's own item, deleted
                row = nil
            } else if kept != nil {
                changes.ended.insert(id)  // another item's delete: nothing of it is local
            } else if let row {
                applied.unsettled.append(Unsettled(stored: row, spelling: id, positions: [position]))
            } else {
                changes.add(item, at: position)
            }
        }
        guard let kept, !keptPositions.isEmpty else { return }
        if let row, row != kept {
            applied.unsettled.append(Unsettled(stored: row, spelling: kept, positions: keptPositions))
        } else {
            for position in keptPositions { changes.add(page.items[position], at: position) }
        }
    }

    /// The writes planned for a page.
    private struct Changes {
        var deletes: [String] = []
        var upserts: [JSONObject] = []
        var positions: [Int] = []
        /// Ids pulled deleted: their clashes end.
        var ended = Set<String>()

        /// Deletes the row of a deleted item (unless `deletingRow` is false: it is gone
        /// already), upserts another.
        mutating func add(_ item: JSONObject, at position: Int, deletingRow: Bool = true) {
            if PushAnswer.isDeleted(item) {
                if deletingRow, let id = PullSteps.id(of: item) { deletes.append(id) }
                if let id = PullSteps.id(of: item) { ended.insert(id) }
            } else {
                upserts.append(item)
            }
            positions.append(position)
        }

        func write(table: String, clashes: [ItemIDCaseClash], in writer: any SyncRecordsWriter) throws {
            if !deletes.isEmpty { try writer.delete(table: table, ids: deletes) }
            if !upserts.isEmpty { try writer.upsert(table: table, items: upserts, ignoreMissingColumns: false) }
            if !clashes.isEmpty || !ended.isEmpty { try ClashRecords.update(table: table, adding: clashes, ending: ended, in: writer) }
        }
    }

    private static func id(of item: JSONObject) -> String? {
        item[SystemProperty.id]?.stringValue
    }
}
