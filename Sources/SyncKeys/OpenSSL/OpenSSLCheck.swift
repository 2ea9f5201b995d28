internal import COpenSSL

/// The one chokepoint for OpenSSL return codes: anything but 1 drains the error queue and throws.
func openSSLCheck(_ rc: Int32, _ operation: String) throws(KeyError) {
    guard rc == 1 else { throw openSSLFailure(operation) }
}

/// The error for a failed OpenSSL call (a `NULL` result or a return code that is not 1), with
/// OpenSSL's error queue drained so the next call starts clean.
func openSSLFailure(_ operation: String) -> KeyError {
    ERR_clear_error()
    return .cryptoFailure(operation)
}

/// Wipes memory so the optimizer cannot drop the stores: the one wipe of the package (SyncSQLite
/// and the stores hold key material in ``SecretBytes``, which calls this).
func cleanse(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    OPENSSL_cleanse(base, buffer.count)
}
