internal import COpenSSL

/// AES-256-GCM over one segment at a time, through OpenSSL's EVP interface: the key is set once,
/// each segment brings its own 12-byte nonce and additional data, and gets or checks its own
/// 16-byte tag.
///
/// Owns an EVP context, freed when the cipher goes away; not copyable, used from one task at a time.
struct SegmentCipher: ~Copyable {
    /// The tag length of every segment.
    static let tagLength = 16
    /// The nonce length of every segment.
    static let nonceLength = 12

    private let context: OpaquePointer
    private let encrypting: Bool

    /// A cipher under the 32-byte `key`, encrypting or decrypting.
    init(key: SecretBytes, encrypting: Bool) throws(KeyError) {
        guard key.count == 32 else { throw .invalidKeyLength(key.count) }
        guard let context = EVP_CIPHER_CTX_new() else { throw openSSLFailure("AES-GCM context") }
        let rc = key.withUnsafeBytes { k in
            EVP_CipherInit_ex(context, EVP_aes_256_gcm(), nil, k.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, encrypting ? 1 : 0)
        }
        guard rc == 1 else {
            EVP_CIPHER_CTX_free(context)
            throw openSSLFailure("AES-GCM init")
        }
        self.context = context
        self.encrypting = encrypting
    }

    deinit {
        EVP_CIPHER_CTX_free(context)
    }

    /// Encrypts `plaintext` into `output` (which must hold `plaintext.count + tagLength` bytes):
    /// the ciphertext, then the tag.
    func seal(
        _ plaintext: UnsafeRawBufferPointer, nonce: [UInt8], aad: [UInt8], into output: UnsafeMutableRawBufferPointer
    ) throws(KeyError) {
        guard encrypting, output.count >= plaintext.count + Self.tagLength else { throw .cryptoFailure("AES-GCM seal") }
        try start(nonce: nonce, aad: aad)
        guard let out = output.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw .cryptoFailure("AES-GCM seal") }
        var written: Int32 = 0
        if let input = plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), !plaintext.isEmpty {
            try openSSLCheck(EVP_CipherUpdate(context, out, &written, input, Int32(plaintext.count)), "AES-GCM seal")
        }
        var final: Int32 = 0
        try openSSLCheck(EVP_CipherFinal_ex(context, out + Int(written), &final), "AES-GCM seal")
        guard Int(written + final) == plaintext.count else { throw .cryptoFailure("AES-GCM seal") }
        try openSSLCheck(
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(Self.tagLength), out + plaintext.count), "AES-GCM tag")
    }

    /// Decrypts `sealed` (ciphertext then tag) into `output` (at least `sealed.count - tagLength`
    /// bytes). Returns `false`, with `output` wiped, when the tag does not match.
    func open(
        _ sealed: UnsafeRawBufferPointer, nonce: [UInt8], aad: [UInt8], into output: UnsafeMutableRawBufferPointer
    ) throws(KeyError) -> Bool {
        let length = sealed.count - Self.tagLength
        guard !encrypting, length >= 0, output.count >= length else { throw .cryptoFailure("AES-GCM open") }
        try start(nonce: nonce, aad: aad)
        guard let input = sealed.baseAddress?.assumingMemoryBound(to: UInt8.self),
            let out = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
        else { throw .cryptoFailure("AES-GCM open") }
        var written: Int32 = 0
        if length > 0 {
            try openSSLCheck(EVP_CipherUpdate(context, out, &written, input, Int32(length)), "AES-GCM open")
        }
        var tag = Array(UnsafeRawBufferPointer(rebasing: sealed[length...]))
        try openSSLCheck(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(Self.tagLength), &tag), "AES-GCM tag")
        var final: Int32 = 0
        guard EVP_CipherFinal_ex(context, out + Int(written), &final) == 1 else {
            ERR_clear_error()
            cleanse(UnsafeMutableRawBufferPointer(rebasing: output[0..<length]))
            return false
        }
        return true
    }

    /// Sets the segment's nonce and feeds its additional data.
    private func start(nonce: [UInt8], aad: [UInt8]) throws(KeyError) {
        guard nonce.count == Self.nonceLength else { throw .cryptoFailure("AES-GCM nonce") }
        try openSSLCheck(EVP_CipherInit_ex(context, nil, nil, nil, nonce, encrypting ? 1 : 0), "AES-GCM nonce")
        var ignored: Int32 = 0
        try openSSLCheck(EVP_CipherUpdate(context, nil, &ignored, aad, Int32(aad.count)), "AES-GCM additional data")
    }
}
