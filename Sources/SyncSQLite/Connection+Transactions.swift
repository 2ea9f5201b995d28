extension Connection {
    /// Runs `body` inside one write transaction (`BEGIN IMMEDIATE`): committed when `body`
    /// returns, rolled back when it throws. `body` is synchronous, so a transaction can never
    /// span an `await`.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` inside a read transaction (`BEGIN DEFERRED`), so it sees one snapshot.
    public func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN DEFERRED")
        defer { try? execute("COMMIT") }
        return try body()
    }
}
