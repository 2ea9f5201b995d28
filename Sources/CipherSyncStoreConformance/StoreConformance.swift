public import CipherSync
import Foundation

/// The conformance suite of the store contract: checks that a `LocalStore` does what the sync
/// engine relies on (`StoreReader`, `StoreWriter`, transactions, the change feed, and the
/// engine's own records kept through them).
///
/// Run it from a test of the store, with a function that makes a new, empty store for each check:
///
/// ```swift
/// @Test func myStoreConforms() async {
///     let failures = await StoreConformance.run { MyStore() }
///     #expect(failures.isEmpty, "\(failures)")
/// }
/// ```
///
/// It does not depend on a test framework: it returns the failures, each naming its check and
/// what was expected.
public enum StoreConformance {
    /// The names of the checks, in the order they run.
    public static var checkNames: [String] { checks.map(\.name) }

    /// Runs every check, each on a new store.
    ///
    /// - Parameters:
    ///   - only: the names of the checks to run (all of them when `nil`); see ``checkNames``.
    ///   - makeStore: makes a new, empty store.
    ///   - dispose: called with each store once its check ended (to close it and remove its files).
    /// - Returns: the failures; empty when the store passes.
    public static func run(
        only: Set<String>? = nil, makeStore: () async throws -> any LocalStore,
        dispose: (any LocalStore) async throws -> Void = { _ in }
    ) async -> [StoreConformanceFailure] {
        var failures: [StoreConformanceFailure] = []
        for check in checks where only?.contains(check.name) ?? true {
            let recorder = FailureRecorder(check: check.name)
            do {
                let store = try await makeStore()
                do { try await check.body(store, recorder) } catch { recorder.fail("threw \(error)") }
                try await dispose(store)
            } catch {
                recorder.fail("the store could not be made or disposed of: \(error)")
            }
            failures += recorder.failures
        }
        return failures
    }

    /// One check: its name and what it does to a new store.
    struct Check: Sendable {
        let name: String
        let body: @Sendable (any LocalStore, FailureRecorder) async throws -> Void
    }

    static let checks: [Check] = tableChecks + transactionChecks + engineChecks
}

/// A check of the store contract that failed.
public struct StoreConformanceFailure: Sendable, Hashable, CustomStringConvertible {
    /// The check's name (one of ``StoreConformance/checkNames``).
    public let check: String
    /// What was expected, and what the store did.
    public let message: String

    /// "check: message".
    public var description: String { "\(check): \(message)" }
}

/// The failures of one check.
final class FailureRecorder {
    let check: String
    private(set) var failures: [StoreConformanceFailure] = []

    init(check: String) {
        self.check = check
    }

    func fail(_ message: String) {
        failures.append(StoreConformanceFailure(check: check, message: message))
    }

    /// Records `message` unless `condition` holds.
    func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fail(message()) }
    }

    /// Records a failure unless `actual` equals `expected`.
    func expectEqual<T: Equatable>(_ actual: T, _ expected: T, _ what: String) {
        if actual != expected { fail("\(what): expected \(expected), got \(actual)") }
    }
}

extension LocalStore {
    /// Every item of a table, by id.
    func items(_ table: String) async throws -> [String: JSONObject] {
        var byId: [String: JSONObject] = [:]
        for item in try await read(QueryDescription(table: table)).items {
            if let id = item["id"]?.stringValue { byId[id] = item }
        }
        return byId
    }

    /// The ids a query returns, in its order.
    func ids(_ query: QueryDescription) async throws -> [String] {
        try await read(query).items.compactMap { $0["id"]?.stringValue }
    }
}
