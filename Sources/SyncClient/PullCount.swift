import SyncWire

/// What a pull counts: the items it wrote or deleted locally, each item of each page once,
/// except that an incremental pull does not count again an item it reads a second time because
/// the item has the delta token's own timestamp (the re-query from a new token, `updatedAt ge`,
/// reads those rows again).
///
/// Only the ids at the current token are remembered, so the memory is bounded by the items
/// that share one timestamp, not by the size of the pull. An item that changed on the server
/// while the pull ran, and is read again with a later `updatedAt`, counts each time it is
/// written; items skipped (a pending local operation, an invalid id) do not count.
struct PullCount {
    /// Items counted so far.
    private(set) var items = 0
    private let incremental: Bool
    /// The token the remembered ids are at, and the ids applied with that `updatedAt`.
    private var boundary: Int64?
    private var boundaryIDs = Set<String>()

    init(incremental: Bool) {
        self.incremental = incremental
    }

    /// Counts the items of `page` at `positions` (those written or deleted), after which the
    /// pull's token is `token`; `stamps` are the items' `updatedAt` in milliseconds
    /// (``PullPage/updatedAtMilliseconds``), read only by an incremental pull.
    mutating func add(_ positions: [Int], of page: PullPage, stamps: [Int64?], token: Int64) {
        guard incremental else {
            items += positions.count
            return
        }
        var read: [(id: String, stamp: Int64?)] = []
        read.reserveCapacity(positions.count)
        for position in positions {
            let item = page.items[position]
            guard let id = item[SystemProperty.id]?.stringValue else { continue }
            read.append((id, stamps[position]))
        }
        for (id, stamp) in read where stamp == nil || stamp != boundary || !boundaryIDs.contains(id) {
            items += 1
        }
        if boundary != token {
            boundary = token
            boundaryIDs.removeAll()
        }
        for (id, stamp) in read where stamp == token { boundaryIDs.insert(id) }
    }
}
