/// A storage's refusal of a call that its tables cannot answer.
///
/// A struct around a private code, so that kinds can be added later without breaking callers;
/// compare with the static members, which match on the kind only (`error == .scopeMismatch`).
public struct TableStorageError: Error, Sendable, Hashable, CustomStringConvertible {
    enum Code: String, Sendable, Hashable {
        case scopeMismatch, idsDifferingOnlyByCase
    }

    let code: Code
    /// The table the refusal is about.
    public let table: String?
    /// How many: the groups of ids that differ only by case (``idsDifferingOnlyByCase``).
    public let count: Int?

    init(_ code: Code, table: String? = nil, count: Int? = nil) {
        self.code = code
        self.table = table
        self.count = count
    }

    /// A table was used with a scope of the other kind (the kind).
    public static let scopeMismatch = TableStorageError(.scopeMismatch)
    /// A table of an existing database holds ids that differ only by ASCII case (the kind).
    public static let idsDifferingOnlyByCase = TableStorageError(.idsDifferingOnlyByCase)

    /// A table was used with a scope of the other kind: a per-user table as shared, or a shared
    /// table per user.
    ///
    /// - Parameter table: The table.
    public static func scopeMismatch(table: String) -> TableStorageError { TableStorageError(.scopeMismatch, table: table) }

    /// A table of an existing database holds two ids that differ only by ASCII case, which ids
    /// can no longer do; the storage does not open.
    ///
    /// - Parameters:
    ///   - table: The table.
    ///   - count: The groups of such ids.
    public static func idsDifferingOnlyByCase(table: String, count: Int) -> TableStorageError {
        TableStorageError(.idsDifferingOnlyByCase, table: table, count: count)
    }

    /// Errors are equal when they are the same kind of error; the table and count are ignored.
    public static func == (lhs: TableStorageError, rhs: TableStorageError) -> Bool { lhs.code == rhs.code }
    /// Hashes the kind of error only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// What went wrong, naming the table (never a row's content).
    public var description: String {
        let table = self.table ?? "?"
        let count = self.count ?? 0
        switch code {
        case .scopeMismatch:
            return "The table '\(table)' is stored as the other kind (shared or per-user) than this server serves it as"
        case .idsDifferingOnlyByCase:
            return """
                The table '\(table)' holds \(count) group\(count == 1 ? "" : "s") of ids that differ only by ASCII case, \
                and ids now name one item whatever their case: keep one id of each group (rename or remove the others), \
                then start the server again
                """
        }
    }
}
