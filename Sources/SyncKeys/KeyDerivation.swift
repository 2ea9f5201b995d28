internal import COpenSSL

/// Password-based and key-based derivation through OpenSSL: scrypt, PBKDF2-HMAC, HKDF-SHA256.
public enum KeyDerivation {
    /// A digest for PBKDF2.
    public enum Digest: String, Sendable, Codable, CaseIterable {
        case sha1 = "sha1", sha256 = "sha256", sha512 = "sha512"
    }

    /// scrypt (RFC 7914). Memory is `128 · r · N` bytes; the cap is set explicitly because
    /// OpenSSL's default (32 MiB) is below what N = 2^17 needs.
    public static func scrypt(
        password: SecretBytes, salt: [UInt8], n: UInt64, r: UInt64, p: UInt64, length: Int
    ) throws(KeyError) -> SecretBytes {
        let needed = 128 * r * n * 2 + 128 * r * p + (1 << 20)
        return try derive(length: length, operation: "scrypt") { out in
            password.withUnsafeBytes { pass in
                EVP_PBE_scrypt(
                    pass.baseAddress?.assumingMemoryBound(to: CChar.self), pass.count, salt, salt.count,
                    n, r, p, needed, out.baseAddress?.assumingMemoryBound(to: UInt8.self), out.count)
            }
        }
    }

    /// PBKDF2-HMAC (RFC 8018) with the given digest.
    public static func pbkdf2(
        password: SecretBytes, salt: [UInt8], iterations: Int, digest: Digest, length: Int
    ) throws(KeyError) -> SecretBytes {
        try derive(length: length, operation: "PBKDF2") { out in
            password.withUnsafeBytes { pass in
                PKCS5_PBKDF2_HMAC(
                    pass.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(pass.count), salt, Int32(salt.count),
                    Int32(iterations), digest.evp, Int32(out.count), out.baseAddress?.assumingMemoryBound(to: UInt8.self))
            }
        }
    }

    /// HKDF-SHA256 (RFC 5869): extract with `salt`, expand with `info`.
    package static func hkdfSHA256(key: SecretBytes, salt: [UInt8], info: [UInt8], length: Int) throws(KeyError) -> SecretBytes {
        guard let ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nil) else { throw openSSLFailure("HKDF context") }
        defer { EVP_PKEY_CTX_free(ctx) }
        try openSSLCheck(EVP_PKEY_derive_init(ctx), "HKDF init")
        try openSSLCheck(EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()), "HKDF digest")
        if !salt.isEmpty { try openSSLCheck(EVP_PKEY_CTX_set1_hkdf_salt(ctx, salt, Int32(salt.count)), "HKDF salt") }
        let rc = key.withUnsafeBytes { k in
            EVP_PKEY_CTX_set1_hkdf_key(ctx, k.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(k.count))
        }
        try openSSLCheck(rc, "HKDF key")
        if !info.isEmpty { try openSSLCheck(EVP_PKEY_CTX_add1_hkdf_info(ctx, info, Int32(info.count)), "HKDF info") }
        return try derive(length: length, operation: "HKDF") { out in
            var outLength = out.count
            return EVP_PKEY_derive(ctx, out.baseAddress?.assumingMemoryBound(to: UInt8.self), &outLength)
        }
    }

    /// HMAC-SHA256 of `data` under `key`.
    package static func hmacSHA256(key: SecretBytes, data: [UInt8]) throws(KeyError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var outLength: UInt32 = 0
        let result = key.withUnsafeBytes { k in
            HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), data, data.count, &out, &outLength)
        }
        guard result != nil, outLength == 32 else { throw openSSLFailure("HMAC-SHA256") }
        return out
    }

    /// SHA-256 of `data` (one call of `SHA256Hasher`).
    ///
    /// - Throws: ``KeyError/cryptoFailure(_:)`` when OpenSSL fails.
    public static func sha256(_ data: [UInt8]) throws(KeyError) -> [UInt8] {
        var hasher = try SHA256Hasher()
        try hasher.update(data)
        return try hasher.finalize()
    }

    private static func derive(
        length: Int, operation: String, _ body: (UnsafeMutableRawBufferPointer) -> Int32
    ) throws(KeyError) -> SecretBytes {
        guard length > 0 else { throw .invalidKeyLength(length) }
        var failed = false
        let key = SecretBytes(count: length) { out in failed = body(out) != 1 }
        if failed { throw openSSLFailure(operation) }
        return key
    }
}

extension KeyDerivation.Digest {
    var evp: OpaquePointer? {
        switch self {
        case .sha1: return EVP_sha1()
        case .sha256: return EVP_sha256()
        case .sha512: return EVP_sha512()
        }
    }
}
