public import SyncClient
public import SyncWire

extension TodoDevice {
    /// The list as it changes: the items now, then after every change to them (a local edit, a
    /// pull, a resolved conflict); see `SyncTable.observe(_:)`.
    /// - Parameter all: include completed items.
    /// - Returns: the items of each state of the list, ordered by text.
    public func watchItems(all: Bool = false) -> some AsyncSequence<[JSONObject], any Error> {
        table.observe(Self.listQuery(all: all)).map(\.items)
    }

    /// Keeps the list live: local changes are pushed, and changes other devices push are pulled
    /// as the server announces them (or at an interval, from a server that announces nothing).
    /// - Returns: the running live sync; stop it before closing the device.
    /// - Throws: what `SyncContext.startLiveSync(_:options:)` throws.
    public func startLiveSync() throws -> LiveSync {
        try context.startLiveSync([LiveSyncTable(Self.tableName, queryId: Self.queryID)])
    }
}
