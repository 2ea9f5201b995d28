internal import COpenSSL

/// Incremental SHA-256 (FIPS 180-4) through OpenSSL's EVP digest interface.
///
/// Feed the input in as many pieces as is convenient with ``update(_:)-(UnsafeRawBufferPointer)``,
/// then take the 32-byte digest with ``finalize()``, which consumes the hasher. Every OpenSSL call
/// is checked: a failure throws ``KeyError/cryptoFailure(_:)``, so a digest that is returned was
/// computed over every byte given. Not copyable: the OpenSSL context it owns is freed exactly once,
/// when the hasher goes away. Use it from one task at a time.
///
/// ```swift
/// var hasher = try SHA256Hasher()
/// try hasher.update(Array("ab".utf8))
/// try hasher.update(Array("c".utf8))
/// let digest = try hasher.finalize()   // ba7816bf…f20015ad, SHA-256("abc")
/// ```
package struct SHA256Hasher: ~Copyable {
    /// The length of a SHA-256 digest in bytes.
    package static let digestLength = 32

    /// The OpenSSL digest context; owned, freed in `deinit`.
    private let context: OpaquePointer

    /// A hasher with nothing fed in yet.
    ///
    /// - Throws: ``KeyError/cryptoFailure(_:)`` when OpenSSL cannot provide SHA-256.
    package init() throws(KeyError) {
        try self.init(properties: nil)
    }

    /// A hasher whose SHA-256 implementation is fetched from OpenSSL's default library context
    /// with the property query `properties` (`nil`: any provider).
    ///
    /// - Throws: ``KeyError/cryptoFailure(_:)`` when no provider matches or OpenSSL fails.
    init(properties: String?) throws(KeyError) {
        guard let context = EVP_MD_CTX_new() else { throw openSSLFailure("SHA-256 context") }
        guard let digest = EVP_MD_fetch(nil, "SHA256", properties) else {
            EVP_MD_CTX_free(context)
            throw openSSLFailure("SHA-256 fetch")
        }
        // The context keeps its own reference to the digest it was initialised with.
        defer { EVP_MD_free(digest) }
        do {
            try openSSLCheck(EVP_DigestInit_ex(context, digest, nil), "SHA-256 init")
        } catch {
            EVP_MD_CTX_free(context)
            throw error
        }
        self.context = context
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    /// Feeds `bytes` into the digest.
    ///
    /// - Throws: ``KeyError/cryptoFailure(_:)`` when OpenSSL fails.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) throws(KeyError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        try openSSLCheck(EVP_DigestUpdate(context, base, bytes.count), "SHA-256 update")
    }

    /// Feeds `bytes` into the digest.
    ///
    /// - Throws: ``KeyError/cryptoFailure(_:)`` when OpenSSL fails.
    package mutating func update(_ bytes: [UInt8]) throws(KeyError) {
        try bytes.withUnsafeBytes { raw in Result { () throws(KeyError) in try update(raw) } }.get()
    }

    /// The digest of everything fed in; the hasher is used up.
    ///
    /// - Returns: ``digestLength`` bytes.
    /// - Throws: ``KeyError/cryptoFailure(_:)`` when OpenSSL fails.
    package consuming func finalize() throws(KeyError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Self.digestLength)
        var length: UInt32 = 0
        let context = context
        let rc = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        try openSSLCheck(rc, "SHA-256 final")
        guard length == Self.digestLength else { throw .cryptoFailure("SHA-256 final") }
        return digest
    }
}
