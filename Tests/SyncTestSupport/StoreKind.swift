public import Foundation
public import SyncKeys
import SyncSQL
import SyncSQLite
@_spi(Testing) public import SyncStore

/// The two flavours of the one store: every store behaviour is tested on both.
public enum StoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case plain
    case encrypted

    public var description: String { rawValue }

    /// The encryption to open a store of this kind with, given a passphrase made for the test.
    public func encryption(_ passphrase: SecretBytes) -> StoreEncryption {
        switch self {
        case .plain: return .none
        case .encrypted: return .passphrase(passphrase)
        }
    }
}

/// A store made for one test in its own temporary directory, which it can close and reopen.
public struct TestStore: Sendable {
    public let kind: StoreKind
    public let directory: TemporaryDirectory
    public let url: URL
    /// A passphrase generated for this test (unused by the plain kind).
    public let passphrase: SecretBytes

    /// Creates a new store of `kind` in a new temporary directory.
    public static func make(_ kind: StoreKind, name: String = "store.db") async throws -> (TestStore, SQLiteStore) {
        let directory = try TemporaryDirectory()
        let test = TestStore(
            kind: kind, directory: directory, url: directory.file(name), passphrase: .testPassphrase())
        let store = try await test.open(create: true)
        return (test, store)
    }

    /// Opens the store again (or for the first time with `create`).
    public func open(create: Bool = false) async throws -> SQLiteStore {
        try await SQLiteStore.open(
            at: url, encryption: kind.encryption(passphrase),
            options: StoreOptions(createIfMissing: create, keyProfile: .insecureTest, allowInsecureKeyProfile: true))
    }

    /// Every file in the test directory (database, side files, envelope).
    public func files() throws -> [URL] {
        try directory.fileURLs()
    }
}

extension SecretBytes {
    /// A random passphrase for one test: 24 printable characters, never logged.
    public static func testPassphrase() -> SecretBytes {
        let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789".utf8)
        var generator = SystemRandomNumberGenerator()
        return SecretBytes((0..<24).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }
}

extension SQLiteStore {
    /// The connection's `PRAGMA cache_size`: negative, a size in KiB; positive, a number of pages.
    /// - Throws: `StoreError.closed` once the store is closed.
    public func pageCacheSetting() throws -> Int64? {
        try withConnection { try $0.scalar("PRAGMA cache_size")?.integerValue }
    }
}
