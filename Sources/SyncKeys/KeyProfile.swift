/// Key-derivation parameters for a passphrase: which KDF and how hard.
public struct KeyProfile: Sendable, Hashable, Codable {
    /// The KDF.
    public enum Algorithm: String, Sendable, Hashable, Codable {
        case scrypt
        case pbkdf2SHA512 = "pbkdf2-sha512"
    }

    /// A short name (`default`, `pbkdf2-sha512`, `insecure-test`).
    public var name: String
    /// The key-derivation function.
    public var algorithm: Algorithm
    /// scrypt cost N (a power of two).
    public var n: UInt64?
    /// scrypt block size r.
    public var r: UInt64?
    /// scrypt parallelism p.
    public var p: UInt64?
    /// PBKDF2 iterations.
    public var iterations: Int?
    /// Salt length in bytes.
    public var saltLength: Int

    /// scrypt N = 2^17, r = 8, p = 1 (OWASP): about 0.6 s and 128 MiB on a 2-core VM.
    public static let `default` = KeyProfile(name: "default", algorithm: .scrypt, n: 1 << 17, r: 8, p: 1, saltLength: 32)
    /// PBKDF2-HMAC-SHA512 with 220,000 iterations (OWASP 2026): about 0.2 s, little memory.
    public static let pbkdf2SHA512 = KeyProfile(name: "pbkdf2-sha512", algorithm: .pbkdf2SHA512, iterations: 220_000, saltLength: 32)
    /// scrypt N = 2^10: fast and weak, for tests only. Refused unless the caller opts in.
    public static let insecureTest = KeyProfile(name: "insecure-test", algorithm: .scrypt, n: 1 << 10, r: 8, p: 1, saltLength: 16)

    /// Every built-in profile.
    public static let all: [KeyProfile] = [.default, .pbkdf2SHA512, .insecureTest]

    /// The built-in profile with `name`.
    public static func named(_ name: String) -> KeyProfile? { all.first { $0.name == name } }

    /// A profile.
    ///
    /// - Parameters:
    ///   - name: A short name.
    ///   - algorithm: The key-derivation function.
    ///   - n: scrypt's cost N (a power of two).
    ///   - r: scrypt's block size r.
    ///   - p: scrypt's parallelism p.
    ///   - iterations: PBKDF2's iteration count.
    ///   - saltLength: The salt length in bytes.
    public init(
        name: String, algorithm: Algorithm, n: UInt64? = nil, r: UInt64? = nil, p: UInt64? = nil,
        iterations: Int? = nil, saltLength: Int
    ) {
        self.name = name
        self.algorithm = algorithm
        self.n = n
        self.r = r
        self.p = p
        self.iterations = iterations
        self.saltLength = saltLength
    }

    /// The floor: scrypt N ≥ 2^17, r = 8, p = 1; PBKDF2-SHA512 ≥ 220,000; salt ≥ 16 bytes.
    /// Throws ``KeyError/weakKeyDerivation(_:)`` below it (the insecure test profile passes only
    /// with `allowInsecure`).
    public func checkFloor(saltLength: Int, allowInsecure: Bool) throws(KeyError) {
        guard saltLength >= 16 else { throw .weakKeyDerivation("salt shorter than 16 bytes") }
        if allowInsecure && sameParameters(as: .insecureTest) { return }
        switch algorithm {
        case .scrypt:
            guard let n, let r, let p, n >= 1 << 17, n.nonzeroBitCount == 1, r == 8, p == 1 else {
                throw .weakKeyDerivation("scrypt needs N ≥ 2^17, r = 8, p = 1")
            }
        case .pbkdf2SHA512:
            guard let iterations, iterations >= 220_000 else {
                throw .weakKeyDerivation("PBKDF2-SHA512 needs at least 220,000 iterations")
            }
        }
    }

    func sameParameters(as other: KeyProfile) -> Bool {
        algorithm == other.algorithm && n == other.n && r == other.r && p == other.p && iterations == other.iterations
    }

    /// Derives a 32-byte key-encryption key from a normalized passphrase and a salt.
    func deriveKey(from passphrase: SecretBytes, salt: [UInt8]) throws(KeyError) -> SecretBytes {
        switch algorithm {
        case .scrypt:
            guard let n, let r, let p, n > 1, n.nonzeroBitCount == 1, r > 0, p > 0, r * p < 1 << 30, n <= 1 << 24 else {
                throw .weakKeyDerivation("invalid scrypt parameters")
            }
            return try KeyDerivation.scrypt(password: passphrase, salt: salt, n: n, r: r, p: p, length: 32)
        case .pbkdf2SHA512:
            guard let iterations, iterations > 0, iterations <= 100_000_000 else {
                throw .weakKeyDerivation("invalid PBKDF2 iteration count")
            }
            return try KeyDerivation.pbkdf2(password: passphrase, salt: salt, iterations: iterations, digest: .sha512, length: 32)
        }
    }
}
