import Foundation
import SyncSQL
import SyncSQLite

/// Re-encrypts a database file into a scratch file, verifies it and renames it over the database
/// (encryption.md §5, step 7): an encrypted database by a byte copy rekeyed in place (§1.4), a plain
/// one by `sqlcipher_export`. The original file is untouched until the rename, and the rename is
/// the single instant at which the database changes key.
///
/// The caller holds the store's exclusive ``StoreLock`` and owns the key envelope; this type
/// knows nothing about envelopes.
enum Reencryption {
    /// The schema name of the scratch file while it is attached.
    static let attachmentName = "ciphersync_export"

    /// How far a re-encryption got, for the caller to read when ``run(database:from:to:progress:beforeRename:report:)``
    /// returns or throws.
    struct Progress {
        /// The pages of the database when the copy started.
        var pages = 0
        /// Whether the copy has replaced the database: from then on the database has the new key,
        /// and a failure of a later step does not undo that.
        var renamed = false
    }

    /// Writes `database` (plain when `oldKey` is `nil`) into a scratch file under `newKey`,
    /// verifies the copy and renames it over the database.
    ///
    /// - Parameters:
    ///   - database: The database file.
    ///   - oldKey: Its current raw key, or `nil` for a plain database.
    ///   - newKey: The new 32-byte raw key.
    ///   - progress: Updated as the copy goes: its page count, then whether the rename happened.
    ///   - beforeRename: Runs after verification, right before the rename (a migration writes its
    ///     key envelope here, so the key is durable before the file needs it).
    ///   - report: Receives step boundaries and copy progress.
    /// - Throws: ``StoreError``; before the rename, the database is unchanged and the scratch
    ///   files are gone.
    static func run(
        database: URL, from oldKey: UnsafeRawBufferPointer?, to newKey: UnsafeRawBufferPointer, progress: inout Progress,
        beforeRename: () throws -> Void, report: (KeyMaintenanceEvent) -> Void
    ) throws {
        let export = StoreFiles.exportFile(of: database)
        try removeScratchFiles(of: database)
        do {
            progress.pages = try writeAndVerify(database: database, oldKey: oldKey, newKey: newKey, into: export, report: report)
            try retireSideFiles(of: database)
            report(.step(.sourceClosed))
            try beforeRename()
        } catch {
            try? removeScratchFiles(of: database)
            throw mapped(error, database: database)
        }
        try StoreFiles.rename(export, over: database)
        progress.renamed = true
        report(.step(.renamed))
        try retireSideFiles(of: database)
        try removeScratchFiles(of: database)
        report(.step(.sideFilesRemoved))
        try StoreFiles.syncDirectory(of: database)
        report(.step(.directorySynced))
    }

    /// Writes the database under the new key into the scratch file, flushes it and verifies it.
    ///
    /// An encrypted database is copied byte for byte and the copy re-encrypted in place
    /// (``copyRekeyAndVerify(source:database:oldKey:newKey:into:totalPages:report:)``); a plain
    /// one is exported (``exportAndVerify(source:database:newKey:into:totalPages:report:)``), since
    /// SQLCipher cannot rekey a plain file.
    ///
    /// - Returns: The pages of the database.
    private static func writeAndVerify(
        database: URL, oldKey: UnsafeRawBufferPointer?, newKey: UnsafeRawBufferPointer, into export: URL,
        report: (KeyMaintenanceEvent) -> Void
    ) throws -> Int {
        let source = try openExisting(database, key: oldKey)
        defer { source.close() }
        try checkpoint(source)
        report(.step(.checkpointed))
        let totalPages = Int(try source.scalar("PRAGMA page_count")?.integerValue ?? 0)
        if let oldKey {
            try copyRekeyAndVerify(
                source: source, database: database, oldKey: oldKey, newKey: newKey, into: export, totalPages: totalPages,
                report: report)
        } else {
            try exportAndVerify(source: source, database: database, newKey: newKey, into: export, totalPages: totalPages, report: report)
        }
        return totalPages
    }

    /// Copies an encrypted database into the scratch file, re-encrypts the copy in place under
    /// the new key, flushes it and verifies it.
    ///
    /// `sqlcipher_export` would rebuild every B-tree row by row; a byte copy followed by
    /// `sqlite3_rekey` decrypts and encrypts each page once and keeps the same layout, with a
    /// small page cache. The source is no longer read by the copy's connection, so its digest is
    /// computed on a connection of its own on another thread (``BackgroundDigest``) while the copy
    /// is made and re-encrypted here; then the copy is checked, read back from the file with the
    /// new key, by ``verify(_:key:report:expected:)`` (its `integrity_check` and its digest on two
    /// other threads) while this thread flushes it. The rename waits for all of them.
    private static func copyRekeyAndVerify(
        source: Connection, database: URL, oldKey: UnsafeRawBufferPointer, newKey: UnsafeRawBufferPointer, into copy: URL,
        totalPages: Int, report: (KeyMaintenanceEvent) -> Void
    ) throws {
        // Nothing writes the database while the procedure runs (the exclusive store lock is held
        // and the log is checkpointed, so the file holds every committed page): its bytes and its
        // digest describe the same content. The source stays open until the digest has ended, so
        // that the digest's connection finds the log files in place and is never the last one to
        // close (closing the last connection locks the database for a moment and removes them).
        let sourceDigest = BackgroundDigest.start(database, key: oldKey)
        defer { sourceDigest.wait() }

        try StoreFiles.createEmptyFile(at: copy.path)
        report(.step(.attached))
        // The copy and the re-encryption each write every page once: progress counts a page half
        // when it is copied and whole once it has the new key. At least 16 reports, so that an
        // interruption can be tested at several points of the copy of a small store too.
        let pageSize = Int64(Connection.pageSize)
        let chunk = Int(min(max(Int64(totalPages) / 16, 1), 2048) * pageSize)
        var reported = 0
        do {
            try StoreFiles.copyContents(of: database, into: copy, chunk: chunk) { bytes in
                let pages = Int(bytes / pageSize) / 2
                if pages > reported {
                    reported = pages
                    report(.progress(pagesWritten: min(pages, totalPages), totalPages: totalPages))
                }
            }
        } catch StoreFiles.CopyError.outOfSpace {
            throw SQLiteError(code: .full, message: "disk is full")
        }

        var copyFault: StoreError?
        do {
            try rekey(copy, from: oldKey, to: newKey)
        } catch {
            guard !(ResultCode.full ~= error.code || ResultCode.ioError ~= error.code || ResultCode.readOnly ~= error.code) else {
                throw error
            }
            // The database was only read: a page of the copy that cannot be read is the copy's
            // fault, unless the source's own reads fail too (its digest, below).
            copyFault = StoreError.verificationFailed("the copy cannot be re-encrypted: \(error.message)")
        }
        // A failure to read the source comes first: it is the database's fault, not the copy's.
        let expected = try sourceDigest.result()
        do {
            if let copyFault { throw copyFault }
            report(.progress(pagesWritten: totalPages, totalPages: totalPages))
            report(.step(.exported))
            try verify(copy, key: newKey, report: report) { expected }
        } catch let error as StoreError where error == .verificationFailed("") {
            // The re-encryption read every page of the copy, so a page the digest does not read
            // (an index) that was already damaged in the database shows up here: say so.
            if let problems = try? source.integrityCheck(), problems == ["ok"] { throw error }
            throw StoreError.corruptOrKeyMismatch
        }
        source.close()
    }

    /// Re-encrypts the byte copy of an encrypted database in place, from `oldKey` to `newKey`.
    private static func rekey(
        _ copy: URL, from oldKey: UnsafeRawBufferPointer, to newKey: UnsafeRawBufferPointer
    ) throws(SQLiteError) {
        let rekeyed = try Connection.open(path: copy.path, mode: .readWrite, key: oldKey)
        defer { rekeyed.close() }
        // The copy is thrown away on any failure and flushed and verified on success, so it needs
        // no journal (leaving WAL mode also rewrites its header as an export would have written
        // it); a small cache makes SQLite write pages out as it goes instead of holding them all.
        try rekeyed.execute("PRAGMA journal_mode = OFF")
        try rekeyed.execute("PRAGMA synchronous = OFF")
        try rekeyed.execute("PRAGMA cache_size = -2048")
        try rekeyed.rekey(to: newKey)
    }

    /// Exports a plain database into the scratch file under the new key, flushes it and verifies
    /// it.
    ///
    /// The source's digest is computed on a connection of its own on another thread
    /// (``BackgroundDigest``) while the export runs here; then the copy is checked, read back from
    /// the file with the new key, by ``verify(_:key:report:expected:)`` (its `integrity_check` and
    /// its digest on two other threads) while this thread flushes it. The rename waits for all of
    /// them.
    private static func exportAndVerify(
        source: Connection, database: URL, newKey: UnsafeRawBufferPointer, into export: URL, totalPages: Int,
        report: (KeyMaintenanceEvent) -> Void
    ) throws {
        // Nothing writes the database while the procedure runs (the exclusive store lock is held
        // and the log is checkpointed): what the export reads and what the digest reads are the
        // same content. The source stays open until the digest has ended (as in
        // copyRekeyAndVerify), so that the digest's connection is never the last one to close.
        let sourceDigest = BackgroundDigest.start(database, key: nil)
        defer { sourceDigest.wait() }

        try StoreFiles.createEmptyFile(at: export.path)
        try source.attach(path: export.path, as: attachmentName, key: newKey)
        // The scratch file is thrown away on any failure and flushed and verified on success, so
        // it needs no journal; a small cache makes SQLite write it out (and report progress) as
        // it goes instead of at the end.
        try source.execute("PRAGMA \(attachmentName).journal_mode = OFF")
        try source.execute("PRAGMA \(attachmentName).synchronous = OFF")
        try source.execute("PRAGMA \(attachmentName).cache_size = -512")
        report(.step(.attached))
        var reported = 0
        try source.withProgressHandler(
            every: 20_000,
            {
                let pages = Int((StoreFiles.size(of: export) ?? 0) / Int64(Connection.pageSize))
                if pages > reported {
                    reported = pages
                    report(.progress(pagesWritten: min(pages, totalPages), totalPages: totalPages))
                }
            }
        ) {
            _ = try source.scalar("SELECT sqlcipher_export('\(attachmentName)')")
        }
        try source.detach(attachmentName)
        report(.progress(pagesWritten: totalPages, totalPages: totalPages))
        report(.step(.exported))
        try verify(export, key: newKey, report: report) { try sourceDigest.result() }
        source.close()
    }

    /// Checks the complete copy while this thread flushes it, and compares its digest with the
    /// source's (`expected`, which may still be being computed elsewhere): its `integrity_check`
    /// and its digest run side by side on two connections of their own, on two other threads
    /// (both cores are free once the copy is written; each connection decrypts the pages it
    /// reads, so the copy is decrypted twice, in less time than once after the other).
    private static func verify(
        _ copy: URL, key: UnsafeRawBufferPointer, report: (KeyMaintenanceEvent) -> Void, expected: () throws -> DatabaseDigest
    ) throws {
        // From here the copy is complete in the file: it is read back from there by its check.
        let check = BackgroundCheck.start(copy, key: key, parts: .integrity)
        defer { check.wait() }
        let digest = BackgroundCheck.start(copy, key: key, parts: .digest)
        defer { digest.wait() }
        // A failure to read the source comes first: it is the database's fault, not the copy's.
        let expected = try expected()
        try StoreFiles.sync(copy)
        report(.step(.synced))
        // A fault the integrity check finds comes first: it says more than a digest that differs.
        _ = try check.result()
        try compare(digest, with: expected, report: report)
    }

    /// Waits for the copy's check and compares the copy's digest with the source's.
    private static func compare(
        _ check: BackgroundWork<DatabaseDigest?>, with expected: DatabaseDigest, report: (KeyMaintenanceEvent) -> Void
    ) throws {
        guard let actual = try check.result() else { throw StoreError.verificationFailed("the copy's digest was not computed") }
        let differences = actual.differences(from: expected)
        guard differences.isEmpty else {
            throw StoreError.verificationFailed("the copy differs in \(differences.joined(separator: ", "))")
        }
        report(.step(.verified))
    }

    /// Opens an existing database for the copy, mapping a key that does not fit.
    static func openExisting(_ url: URL, key: UnsafeRawBufferPointer?) throws -> Connection {
        guard StoreFiles.exists(url) else { throw StoreError.storeNotFound(url.path) }
        do {
            return try Connection.open(path: url.path, mode: .readWrite, key: key)
        } catch let error where ResultCode.notADatabase ~= error.code {
            throw StoreError.corruptOrKeyMismatch
        }
    }

    /// Moves every committed WAL frame into the database and empties the log.
    private static func checkpoint(_ connection: Connection) throws {
        let result = try connection.rows("PRAGMA wal_checkpoint(TRUNCATE)").first ?? []
        guard result.first?.integerValue ?? 0 == 0 else {
            throw StoreError.storeInUse("The store's write-ahead log is busy; close every program using the store.")
        }
    }

    /// Opens the copy with the new key and checks its header, then its structure or its content
    /// digest (`parts`; the two run side by side on two connections, ``verify(_:key:report:expected:)``).
    ///
    /// - Returns: The copy's digest, for the caller to compare with the source's; `nil` when
    ///   `parts` is ``CopyCheckParts/integrity``.
    /// - Throws: ``StoreError/verificationFailed(_:)`` for any fault found, a page that cannot be
    ///   read or authenticated included (the copy is damaged; the database is not).
    static func checkedDigest(
        of url: URL, key: UnsafeRawBufferPointer, parts: CopyCheckParts
    ) throws -> DatabaseDigest? {
        guard !StoreFiles.isPlainDatabase(at: url) else {
            throw StoreError.verificationFailed("the new file is not encrypted")
        }
        let copy: Connection
        do {
            copy = try Connection.open(path: url.path, mode: .readWrite, key: key)
        } catch {
            throw StoreError.verificationFailed("the new file does not open with the new key")
        }
        defer { copy.close() }
        do {
            switch parts {
            case .integrity:
                // The check looks up every index entry's row: a cache that holds the whole file
                // reads each page once.
                try setCache(of: copy, toHold: url)
                let problems = try copy.integrityCheck()
                guard problems == ["ok"] else {
                    throw StoreError.verificationFailed("integrity check of the new file: \(summary(of: problems))")
                }
                return nil
            case .digest:
                // The digest reads each table in order: the default cache does.
                return try DatabaseDigest.compute(copy)
            }
        } catch let error as SQLiteError {
            throw StoreError.verificationFailed("the new file cannot be read: \(error.message)")
        } catch let error as StoreError where error == .corruptOrKeyMismatch {
            throw StoreError.verificationFailed("a page of the new file cannot be read or authenticated")
        }
    }

    /// What a check of a copy runs on its connection.
    enum CopyCheckParts: Sendable {
        /// `integrity_check` alone.
        case integrity
        /// The digest alone.
        case digest
    }

    /// The first three problems a check reported (SQLite may give many in one row, a line each).
    private static func summary(of problems: [String]) -> String {
        problems.flatMap { $0.split(whereSeparator: \.isNewline) }.prefix(3).joined(separator: "; ")
    }

    /// The most page cache the integrity check of a copy uses, in bytes: the pages of a copy up
    /// to about this size are decrypted once by it; a larger one is read again where the cache
    /// cannot hold it.
    static let maximumCacheBytes: Int64 = 256 << 20

    /// Gives `connection` a page cache that holds every page of the database file at `url` (up
    /// to ``maximumCacheBytes``).
    private static func setCache(of connection: Connection, toHold url: URL) throws {
        let size = StoreFiles.size(of: url) ?? 0
        // SQLite counts each page's header beside its 4 KiB (about 5 %): an eighth more than the
        // file, so that a second pass finds every page instead of evicting what it needs next.
        let bytes = min(size + size / 8 + (1 << 20), maximumCacheBytes)
        // A negative cache_size is a size in KiB.
        try connection.execute("PRAGMA cache_size = -\(bytes / 1024)")
    }

    /// Removes the database's `-wal`, `-shm` and `-journal` once no connection is open. A
    /// non-empty `-wal` at this point would hold data the copy lacks, so it stops the procedure.
    static func retireSideFiles(of database: URL) throws {
        let wal = URL(fileURLWithPath: database.path + "-wal")
        if let size = StoreFiles.size(of: wal), size > 0 {
            throw StoreError.storeInUse("The store's write-ahead log still holds changes; close every program using the store.")
        }
        for file in StoreFiles.sideFiles(of: database) { try StoreFiles.remove(file) }
    }

    /// Removes the scratch files of an earlier, interrupted run.
    static func removeScratchFiles(of database: URL) throws {
        for file in StoreFiles.scratchFiles(of: database) { try StoreFiles.remove(file) }
    }

    /// Gives SQLite's disk-full and permission failures a message a technician can act on.
    static func mapped(_ error: any Error, database: URL) -> any Error {
        guard let error = error as? SQLiteError else {
            if let error = error as? StoreError, error == .database, let inner = error.underlyingError {
                return mapped(inner, database: database)
            }
            return error
        }
        let directory = database.deletingLastPathComponent().path
        // sqlcipher_export reports the failure of its inner statements as SQLITE_ERROR with their message.
        let full = ResultCode.full ~= error.code || error.message.contains("disk is full")
        let damaged =
            ResultCode.notADatabase ~= error.code || ResultCode.corrupt ~= error.code
            || error.message.contains("malformed") || error.message.contains("not a database")
        switch error.code {
        case _ where damaged:
            return StoreError.corruptOrKeyMismatch
        case _ where full:
            let size = (StoreFiles.size(of: database) ?? 0) / 1_048_576 + 1
            return StoreError.diskFull(
                "Disk full: not enough free disk space in \(directory); changing the key needs room for a second copy of the database (about \(size) MB). Free some disk space, then run the command again."
            )
        case .readOnly, .cantOpen, .permission:
            return StoreError.fileSystem("Cannot write in \(directory): the directory or the disk is read-only.")
        case _ where ResultCode.ioError ~= error.code || error.message.contains("disk I/O error"):
            // On a nearly full disk, SQLite reports a failed write as an I/O error: say "full".
            if StoreError.isOutOfSpace(error, in: database.deletingLastPathComponent()) {
                return StoreError.diskFull(
                    "Disk full: not enough free disk space in \(directory) (an I/O error on a nearly full disk). Free some disk space, then run the command again."
                )
            }
            return StoreError.ioError(
                "A disk I/O error occurred while writing in \(directory); the disk may be failing. Check it, then run the command again.")
        default:
            return StoreError.database(error)
        }
    }
}
