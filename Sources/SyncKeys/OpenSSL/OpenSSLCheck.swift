internal import COpenSSL

/// The one chokepoint for OpenSSL return codes: anything but 1 drains the error queue and throws.
func openSSLCheck(_ rc: Int32, _ operation: String) throws(KeyError) {
    guard rc == 1 else {
        ERR_clear_error()
        throw .cryptoFailure(operation)
    }
}

/// Wipes memory so the optimizer cannot drop the stores.
func cleanse(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    OPENSSL_cleanse(base, buffer.count)
}
