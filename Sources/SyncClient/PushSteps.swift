import Foundation
import SyncStore
import SyncWire

/// The store steps of a push, run inside its write transactions.
enum PushSteps {
    /// The first `limit` operations after `id`, in queue order, each marked attempted, with the
    /// items to send: one read of the run, one read of its rows per table, one mark.
    static func claim(after id: Int64, limit: Int, in writer: any SyncRecordsWriter) throws -> [ClaimedOperation] {
        let operations = try writer.operations(after: id, limit: limit)
        var wanted: [String: [String]] = [:]  // the ids of each table's rows to send
        for operation in operations where operation.kind != .delete { wanted[operation.table, default: []].append(operation.itemId) }
        var rows: [String: [String: JSONObject]] = [:]
        for (table, ids) in wanted {
            var byKey: [String: JSONObject] = [:]
            for row in try writer.lookup(table: table, ids: ids) {
                if let rowId = row[SystemProperty.id]?.stringValue { byKey[ItemID.key(rowId)] = row }
            }
            rows[table] = byKey
        }
        try writer.setState(.attempted, ofOperations: operations.filter { $0.state != .attempted }.map(\.id))
        return operations.map { operation in
            var marked = operation
            marked.state = .attempted
            let item: JSONObject?
            switch operation.kind {
            case .delete: item = operation.item ?? [SystemProperty.id: .string(operation.itemId)]
            case .insert, .update: item = rows[operation.table]?[ItemID.key(operation.itemId)]
            }
            return ClaimedOperation(record: marked, item: item, previousState: operation.state)
        }
    }

    /// Records the answers of sent operations, in the order they were sent, in a few statements:
    /// one read of the operations as they are now, one removal of the settled ones (and their
    /// errors), the server's items of consecutive successes in one table stored by one write
    /// (planned once for them all); a failure or an operation edited in flight is recorded on its own.
    static func record(_ answered: [AnsweredOperation], in writer: any SyncRecordsWriter) throws {
        guard !answered.isEmpty else { return }
        var current: [Int64: TableOperationRecord] = [:]
        for operation in try writer.operations(ids: answered.map(\.sent.id)) { current[operation.id] = operation }
        var settled: [Int64] = []
        var items = AnsweredItems()
        for answer in answered {
            let now = current[answer.sent.id]
            switch answer.outcome {
            case .success(let item):
                try recordSuccess(answer.sent, current: now, result: item, in: writer, settling: &settled, storing: &items)
            case .failure(let failure): try recordFailure(answer.sent, current: now, failure, in: writer)
            }
        }
        try writer.deleteOperations(ids: settled)
        try items.flush(into: writer)
    }

    /// The server's items of recorded successes not stored yet: a run of one table's items,
    /// each of another item (a second answer for an item stores the run first, so every item is
    /// stored in the order its answers came).
    struct AnsweredItems {
        private var table: String?
        private var items: [JSONObject] = []
        private var keys: Set<String> = []

        /// Adds an item of `table` to the run, storing the run first when it is of another table
        /// or already holds the item.
        mutating func add(_ item: JSONObject, key: String, table: String, into writer: any SyncRecordsWriter) throws {
            if table != self.table || keys.contains(key) {
                try flush(into: writer)
                self.table = table
            }
            items.append(item)
            keys.insert(key)
        }

        /// Stores the run.
        mutating func flush(into writer: any SyncRecordsWriter) throws {
            guard let table, !items.isEmpty else { return }
            try writer.upsert(table: table, items: items, ignoreMissingColumns: false)
            items.removeAll(keepingCapacity: true)
            keys.removeAll(keepingCapacity: true)
        }
    }

    /// Gives claimed operations that were never sent back the state they had before the claim
    /// (an edit made since keeps its own changes; a failure edited since is pending again).
    static func release(_ unsent: [ClaimedOperation], in writer: any SyncRecordsWriter) throws {
        for claimed in unsent where claimed.previousState != .attempted {
            guard var current = try writer.operation(id: claimed.record.id), current.state == .attempted else { continue }
            current.state = current.version == claimed.record.version ? claimed.previousState : .pending
            try writer.updateOperation(current)
        }
    }

    /// Records a success. If the operation is unchanged since it was sent (`current`, as it is
    /// now), it joins `settled` (removed with the others) and the server's item is stored; if a
    /// local write changed it while the request was in flight, the newer local edit wins: the
    /// operation stays queued (an insert becomes an update, since the server has the item now)
    /// and only the server's system properties are taken.
    static func recordSuccess(
        _ sent: TableOperationRecord, current: TableOperationRecord?, result: JSONObject?, in writer: any SyncRecordsWriter,
        settling settled: inout [Int64], storing items: inout AnsweredItems
    ) throws {
        guard var current else { return }
        if current.version == sent.version || sent.kind == .delete {
            settled.append(sent.id)
            if var server = result {
                if server[SystemProperty.id] == nil { server[SystemProperty.id] = .string(sent.itemId) }
                if let id = server[SystemProperty.id]?.stringValue, ItemID.key(id) == ItemID.key(sent.itemId) {
                    try items.add(server, key: ItemID.key(sent.itemId), table: sent.table, into: writer)
                }
            }
            return
        }
        // The row is read and written below: what is waiting to be stored goes first.
        try items.flush(into: writer)
        var system: JSONObject = [:]
        for name in [SystemProperty.version, SystemProperty.createdAt, SystemProperty.updatedAt] {
            if let value = result?[name], !value.isNull { system[name] = value }
        }
        if current.kind == .delete {
            if let version = system[SystemProperty.version] { current.item?[SystemProperty.version] = version }
        } else {
            if current.kind == .insert { current.kind = .update }
            if !system.isEmpty, try writer.lookup(table: sent.table, id: sent.itemId) != nil {
                system[SystemProperty.id] = .string(sent.itemId)
                try writer.upsert(table: sent.table, items: [system], ignoreMissingColumns: false)
            }
        }
        current.state = .pending
        try writer.updateOperation(current)
    }

    /// Records a failure as the operation's error (replacing older ones), unless a local write
    /// changed the operation (`current`, as it is now) while it was in flight (the next push
    /// sends the new content). An operation the server may have applied all the same (no answer,
    /// 408, 5xx) stays marked attempted; a clear refusal marks it failed.
    static func recordFailure(
        _ sent: TableOperationRecord, current: TableOperationRecord?, _ failure: PushFailure, in writer: any SyncRecordsWriter
    ) throws {
        guard var current, current.version == sent.version else { return }
        try writer.deleteOperationErrors(operationId: sent.id)
        try writer.addOperationError(
            OperationErrorRecord(
                operationId: sent.id, operationVersion: sent.version, kind: sent.kind, table: sent.table,
                itemId: sent.itemId, statusCode: failure.statusCode, message: failure.message, item: failure.item,
                serverItem: failure.serverItem, rawResponse: failure.response.flatMap(ServiceConnection.rawText(of:)),
                conflict: failure.conflict?.rawValue))
        current.state = failure.statusCode.map(PushAnswer.leavesOutcomeOpen) == true ? .attempted : .failed
        try writer.updateOperation(current)
    }
}
