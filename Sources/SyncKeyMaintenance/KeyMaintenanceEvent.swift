/// A step boundary of a key-maintenance procedure (data-key rotation, plain-to-encrypted
/// migration), reported when it has been reached.
///
/// Each step is durable when reported: a crash right after it leaves the state the step names, and
/// the next open or the next run of the procedure finishes or rolls back from there. The raw values
/// are stable names (used by the CLI's test hook and in documentation).
public enum KeyMaintenanceStep: String, Sendable, CaseIterable, Codable {
    /// The store's exclusive lock is held; nothing has changed yet.
    case locked = "locked"
    /// The key envelope records a rotation in progress (old and new data keys).
    case envelopeRotating = "envelope-rotating"
    /// The write-ahead log has been checkpointed into the database and truncated.
    case checkpointed = "checkpointed"
    /// The scratch file exists: empty, about to receive a byte copy of the encrypted database, or
    /// attached with the new key for the export of a plain one.
    case attached = "attached"
    /// The scratch file holds the whole database under the new key (re-encrypted in place, or
    /// exported table by table).
    case exported = "exported"
    /// The scratch file has been flushed to the disk.
    case synced = "synced"
    /// The scratch file opened with the new key, passed `integrity_check` and has the same content.
    case verified = "verified"
    /// The original database is closed and its empty side files are gone.
    case sourceClosed = "source-closed"
    /// A new key envelope (migration only) has been written before the rename.
    case envelopeWritten = "envelope-written"
    /// The scratch file has replaced the database (atomic rename).
    case renamed = "renamed"
    /// Stale `-wal`, `-shm` and `-journal` files are gone.
    case sideFilesRemoved = "side-files-removed"
    /// The directory has been flushed, so the rename is durable.
    case directorySynced = "directory-synced"
    /// The key envelope holds only the new data key.
    case envelopeActive = "envelope-active"
    /// Replaced plaintext has been wiped and removed (migration only).
    case plaintextRemoved = "plaintext-removed"
    /// A TPM slot's secret is sealed in a new persistent TPM object; the envelope does not name
    /// it yet (adding a TPM slot).
    case tpmSealed = "tpm-sealed"
    /// The key envelope has been overwritten in place by its shredded form (shredding): from here
    /// on nothing opens the store.
    case envelopeOverwritten = "envelope-overwritten"
    /// A TPM object that no slot names any more has been evicted (removing or replacing a TPM
    /// slot, shredding).
    case tpmEvicted = "tpm-evicted"
}

/// What a key-maintenance procedure reports while it runs.
public enum KeyMaintenanceEvent: Sendable, Equatable {
    /// A step boundary was reached (see ``KeyMaintenanceStep``).
    case step(KeyMaintenanceStep)
    /// Copy progress: pages written to the new file so far, of about `totalPages`. A copy that is
    /// re-encrypted in place writes each page twice and counts it half when copied and whole
    /// when re-encrypted (reported at the end of that pass, which runs in one call).
    case progress(pagesWritten: Int, totalPages: Int)
}
