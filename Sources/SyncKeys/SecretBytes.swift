internal import COpenSSL

/// Bytes that must not outlive their use: keys, passphrases, recovery codes.
///
/// The bytes live in one heap buffer that is wiped with `OPENSSL_cleanse` when the last copy
/// goes away; equality is constant-time; `description` never shows the bytes. A `String` cannot
/// be wiped, so secrets stay in this type from input to use.
public struct SecretBytes: Sendable, Equatable, CustomStringConvertible {
    /// Immutable after initialisation, so sharing it across threads is safe.
    final class Storage: @unchecked Sendable {
        let buffer: UnsafeMutableRawBufferPointer

        init(count: Int) {
            buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            self.count = count
        }

        let count: Int

        /// Overwrites the whole buffer with zeros.
        func wipe() {
            cleanse(buffer)
        }

        deinit {
            wipe()
            buffer.deallocate()
        }
    }

    let storage: Storage

    /// Copies `bytes`. The caller's array cannot be wiped by this type; prefer
    /// ``init(count:initializer:)`` or ``init(wiping:)`` for material that is already secret.
    public init(_ bytes: [UInt8]) {
        storage = Storage(count: bytes.count)
        if !bytes.isEmpty { storage.buffer.copyBytes(from: bytes) }
    }

    /// Moves `bytes` in and wipes the caller's array.
    public init(wiping bytes: inout [UInt8]) {
        self.init(bytes)
        bytes.withUnsafeMutableBytes { cleanse($0) }
        bytes.removeAll()
    }

    /// Creates `count` bytes filled in place by `initializer`.
    public init(count: Int, initializer: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        storage = Storage(count: count)
        try initializer(UnsafeMutableRawBufferPointer(rebasing: storage.buffer[0..<count]))
    }

    /// `count` bytes from OpenSSL's CSPRNG.
    public static func random(count: Int) throws(KeyError) -> SecretBytes {
        var ok = true
        let secret = SecretBytes(count: count) { buffer in
            guard let base = buffer.baseAddress, count > 0 else { return }
            ok = RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(count)) == 1
        }
        try openSSLCheck(ok ? 1 : 0, "RAND_bytes")
        return secret
    }

    /// The number of bytes.
    public var count: Int { storage.count }

    /// Whether there are no bytes.
    public var isEmpty: Bool { storage.count == 0 }

    /// Calls `body` with the bytes; the pointer must not escape.
    ///
    /// - Parameter body: Reads the bytes in place (pass them on to C from here rather than copy them).
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage.buffer[0..<storage.count]))
    }

    /// Constant-time comparison (`CRYPTO_memcmp`); lengths are not secret.
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.count == 0 { return true }
        return lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0 } }
    }

    /// The length only: the bytes never reach a log.
    public var description: String { "SecretBytes(\(count) bytes, redacted)" }
}

/// Random bytes that are not secret (salts, ids).
extension SecretBytes {
    /// Wipes `buffer` so that the optimizer cannot drop the stores: for C structures that held a
    /// secret on their way to a library (a TPM's sensitive area, say).
    ///
    /// - Parameter buffer: The memory to overwrite with zeros.
    public static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        cleanse(buffer)
    }

    /// Overwrites the bytes of `bytes` with zeros where they are, also when the array's storage
    /// is shared with other copies of it: plaintext that is done with (attachment content).
    ///
    /// - Parameter bytes: An array none of whose copies is read again.
    public static func wipe(contentsOf bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            cleanse(UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(mutating: base), count: raw.count))
        }
    }
}

package enum RandomBytes {
    /// `count` bytes from OpenSSL's CSPRNG.
    package static func make(_ count: Int) throws(KeyError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try openSSLCheck(RAND_bytes(&bytes, Int32(count)), "RAND_bytes")
        return bytes
    }
}
