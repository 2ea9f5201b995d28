public import Foundation
public import SyncKeyMaintenance
import SyncSQLite

/// A **test hook**: when the environment variable `CIPHERSYNC_FAULT_DAMAGE_PAGE` holds a page
/// number N (1 = the first page), the key tools (`sync-keys rotate`, `encrypt`) flip bytes in
/// the middle of page N of the re-encrypted copy right after it has been written (the `exported`
/// step) and before it is verified, so tests can prove that a damaged copy is refused and the
/// store kept as it was.
///
/// The hook cannot weaken security: it only damages the scratch copy, a file that anyone who can
/// set the environment can already write; it reads no secret.
@_spi(Testing)
public struct CopyDamage: Sendable {
    /// The environment variable the hook reads.
    public static let environmentVariable = "CIPHERSYNC_FAULT_DAMAGE_PAGE"

    private let copy: URL
    private let page: Int

    /// The hook the environment asks for on the store at `database`, or `nil` (the normal case).
    ///
    /// - Parameter database: The store's database file.
    /// - Throws: ``CLIError`` (usage) when the variable is set to something other than a page number.
    public static func fromEnvironment(database: URL) throws -> CopyDamage? {
        guard let value = ProcessInfo.processInfo.environment[environmentVariable], !value.isEmpty else { return nil }
        guard let page = Int(value), page >= 1 else {
            throw CLIError.usage("\(environmentVariable)=\(value) is not a page number.")
        }
        return CopyDamage(copy: StoreFiles.exportFile(of: database), page: page)
    }

    private init(copy: URL, page: Int) {
        self.copy = copy
        self.page = page
    }

    /// Damages the copy if `event` is the step after which it is written and not yet checked
    /// (its check, and its flush beside it, start right after that step is reported).
    ///
    /// - Parameter event: The event the procedure just reported.
    public func observe(_ event: KeyMaintenanceEvent) {
        guard event == .step(.exported) else { return }
        let descriptor = open(copy.path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let offset = off_t((page - 1) * Connection.pageSize + Connection.pageSize / 2)
        var bytes = [UInt8](repeating: 0, count: 16)
        guard pread(descriptor, &bytes, bytes.count, offset) == bytes.count else { return }
        for index in bytes.indices { bytes[index] ^= 0xA5 }
        _ = pwrite(descriptor, bytes, bytes.count, offset)
    }
}
