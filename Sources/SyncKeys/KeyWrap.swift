internal import COpenSSL

/// AES key wrap through OpenSSL: RFC 3394 (KW) and RFC 5649 (KWP, with padding).
///
/// The key-encryption key may be 16, 24 or 32 bytes. A failed unwrap throws
/// ``KeyError/unwrapFailed`` and releases nothing.
public enum KeyWrap {
    /// The wrapping mode.
    public enum Mode: Sendable {
        /// RFC 3394: input a multiple of 8 bytes, at least 16.
        case kw
        /// RFC 5649: any input length from 1 byte.
        case kwp
    }

    /// Wraps `key` under `kek`.
    public static func wrap(_ key: SecretBytes, using kek: SecretBytes, mode: Mode = .kwp) throws(KeyError) -> [UInt8] {
        // OpenSSL reads the key straight from the secret's own buffer: no copy is made to wipe.
        try key.withUnsafeBytes { (input) throws(KeyError) in
            try run(input, kek: kek, mode: mode, encrypt: true, operation: "key wrap")
        }
    }

    /// Unwraps `wrapped` under `kek`.
    public static func unwrap(_ wrapped: [UInt8], using kek: SecretBytes, mode: Mode = .kwp) throws(KeyError) -> SecretBytes {
        do {
            var plain = try wrapped.withUnsafeBytes { input in
                Result { () throws(KeyError) in try run(input, kek: kek, mode: mode, encrypt: false, operation: "key unwrap") }
            }.get()
            return SecretBytes(wiping: &plain)
        } catch {
            throw .unwrapFailed
        }
    }

    private static func cipher(_ kekLength: Int, _ mode: Mode) throws(KeyError) -> OpaquePointer? {
        switch (kekLength, mode) {
        case (16, .kw): return EVP_aes_128_wrap()
        case (24, .kw): return EVP_aes_192_wrap()
        case (32, .kw): return EVP_aes_256_wrap()
        case (16, .kwp): return EVP_aes_128_wrap_pad()
        case (24, .kwp): return EVP_aes_192_wrap_pad()
        case (32, .kwp): return EVP_aes_256_wrap_pad()
        default: throw .invalidKeyLength(kekLength)
        }
    }

    /// Wraps or unwraps `input`; the result holds only the output bytes (the scratch buffer is
    /// wiped). The caller wipes an unwrapped result.
    private static func run(
        _ input: UnsafeRawBufferPointer, kek: SecretBytes, mode: Mode, encrypt: Bool, operation: String
    ) throws(KeyError) -> [UInt8] {
        let evp = try cipher(kek.count, mode)
        guard let inputBytes = input.baseAddress?.assumingMemoryBound(to: UInt8.self), !input.isEmpty else {
            throw .cryptoFailure(operation)
        }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw openSSLFailure(operation) }
        defer { EVP_CIPHER_CTX_free(ctx) }
        // OpenSSL refuses wrap ciphers unless the context allows them explicitly.
        EVP_CIPHER_CTX_set_flags(ctx, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW)
        let initialised = kek.withUnsafeBytes { k in
            EVP_CipherInit_ex(ctx, evp, nil, k.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, encrypt ? 1 : 0)
        }
        try openSSLCheck(initialised, operation)
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        try openSSLCheck(EVP_CipherUpdate(ctx, &output, &written, inputBytes, Int32(input.count)), operation)
        var final: Int32 = 0
        let finished = output.withUnsafeMutableBufferPointer { buffer in
            EVP_CipherFinal_ex(ctx, buffer.baseAddress.map { $0 + Int(written) }, &final)
        }
        try openSSLCheck(finished, operation)
        let count = Int(written + final)
        let result = Array(output.prefix(count))
        output.withUnsafeMutableBytes { cleanse($0) }
        return result
    }
}
