import PostgresNIO
import SyncWire
import Synchronization

/// Transactions of several writes: ``inTransaction(_:)`` leases one connection, begins a
/// transaction on it and makes it the task's **open transaction**; every statement of this
/// storage that the task runs meanwhile (``leased(_:)``, hence every read and write, and the
/// attachment content's statements) runs on that connection, inside it. A write's own
/// transaction becomes part of the open one, and its change is announced when the open one
/// commits.
extension PostgresTableStorage {
    /// The transaction the current task runs in, with the storage it belongs to.
    @TaskLocal static var openTransaction: OpenTransaction?

    /// The transaction of this storage the current task runs in, if any.
    var ownTransaction: OpenTransaction? {
        guard let open = Self.openTransaction, open.storage == ObjectIdentifier(self) else { return nil }
        return open
    }

    /// The connection of this storage's transaction the current task runs in, if any.
    var transactionConnection: PostgresConnection? { ownTransaction?.connection }

    /// Announces a committed write, or keeps it until the open transaction it belongs to commits.
    func announce(_ change: TableChange) {
        if let open = ownTransaction {
            open.changes.withLock { $0.append(change) }
        } else {
            changeFeed?.publish(change)
        }
    }

    /// Runs `body` as one transaction on one connection: each write keeps its own condition,
    /// stamp and result, and takes its table's write serialisation (held until the end); the
    /// writes become visible together at the commit, and none of them when `body` throws. A
    /// table or column it makes is known to the transaction alone until it commits (see
    /// `cache(_:of:)`): no other task of this instance writes to a table that is not committed
    /// yet, and none is left believing in one that was rolled back. A transaction PostgreSQL ends
    /// as a deadlock victim is run again (up to three times in all). Inside an open transaction,
    /// `body` simply joins it.
    ///
    /// - Parameter body: The writes.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; ``StorageUnavailableError`` or
    ///   ``StorageOutcomeUnknownError`` as `transaction(_:)` says.
    public func inTransaction<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        if transactionConnection != nil { return try await body() }
        var attempt = 1
        while true {
            let open = OpenTransaction(storage: ObjectIdentifier(self))
            do {
                let result = try await transaction { connection in
                    open.connection = connection
                    return try await Self.$openTransaction.withValue(open) { try await body() }
                }
                let made = open.schemas.withLock { $0 }
                schemas.withLock { $0.merge(made) { _, committed in committed } }
                for change in open.changes.withLock({ $0 }) { changeFeed?.publish(change) }
                return result
            } catch {
                // The schemas the transaction read or made go with it: the instance's cache never had them.
                guard attempt < 3, Self.isDeadlock(error) else { throw error }
                attempt += 1
            }
        }
    }

    /// Keeps a schema read from the database (`nil`: the table does not exist): in the instance's
    /// cache, or, inside an open transaction, in that transaction's own until it commits — a
    /// schema read on its connection may show a table or column it made and has not committed,
    /// which no other task may see before the commit.
    func cache(_ schema: TableSchema?, of key: ColumnKey) {
        if let open = ownTransaction {
            open.schemas.withLock { $0[key] = schema }
        } else {
            schemas.withLock { $0[key] = schema }
        }
    }

    /// The schema of `key` as the open transaction the current task runs in knows it (made or
    /// read in it), `nil` outside one or when it knows none.
    func transactionSchema(of key: ColumnKey) -> TableSchema? {
        ownTransaction?.schemas.withLock { $0[key] }
    }

    /// Whether `error` says PostgreSQL ended the transaction to break a deadlock (40P01).
    static func isDeadlock(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "40P01"
    }

    /// The row of `id` in `scope`, locked against changes (`FOR SHARE`) until the current
    /// transaction ends; `nil` when there is none.
    public func lockedRow(table: String, id: String, scope: RowScope) async throws -> JSONObject? {
        guard let schema = try await scoped(table, scope) else { return nil }
        let sql: SQLFragment = "SELECT * FROM \(identifier: schema.name) WHERE \(inline: Self.key(id, scope)) FOR SHARE"
        return try await rows(sql.statement(in: .postgres), schema).first
    }
}

/// One open transaction of a ``PostgresTableStorage``: its connection, the changes its writes
/// announce once it commits, and the schemas it read or made, which join the instance's cache
/// once it commits.
final class OpenTransaction: Sendable {
    let storage: ObjectIdentifier
    private let held = Mutex<PostgresConnection?>(nil)
    let changes = Mutex<[TableChange]>([])
    let schemas = Mutex<[ColumnKey: TableSchema]>([:])

    init(storage: ObjectIdentifier) {
        self.storage = storage
    }

    /// The transaction's connection (set once it began).
    var connection: PostgresConnection? {
        get { held.withLock { $0 } }
        set { held.withLock { $0 = newValue } }
    }
}
