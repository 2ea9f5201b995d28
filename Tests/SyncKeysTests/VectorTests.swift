import Foundation
import SyncKeys
import Testing

struct KDFVectors: Decodable {
    struct Scrypt: Decodable, Sendable, CustomStringConvertible {
        var source: String, password: String, salt: String, n: UInt64, r: UInt64, p: UInt64, length: Int, expected: String
        var description: String { source }
    }
    struct PBKDF2: Decodable, Sendable, CustomStringConvertible {
        var source: String, digest: String, password: String, salt: String, iterations: Int, length: Int, expected: String
        var description: String { source }
    }
    struct HKDF: Decodable, Sendable, CustomStringConvertible {
        var source: String, ikm: String, salt: String, info: String, length: Int, expected: String
        var description: String { source }
    }
    var scrypt: [Scrypt]
    var pbkdf2: [PBKDF2]
    var hkdf: [HKDF]

    static let all: KDFVectors = (try? loadJSON(KDFVectors.self, "Keys/vectors/kdf.json")) ?? KDFVectors(scrypt: [], pbkdf2: [], hkdf: [])
}

struct WrapVectors: Decodable {
    struct Vector: Decodable, Sendable, CustomStringConvertible {
        var source: String, kek: String, key: String, expected: String
        var description: String { source }
    }
    var kw: [Vector]
    var kwp: [Vector]

    static let all: WrapVectors = (try? loadJSON(WrapVectors.self, "Keys/vectors/keywrap.json")) ?? WrapVectors(kw: [], kwp: [])
}

/// Every known-answer vector in Keys/vectors (C18, C19).
@Suite struct VectorTests {
    @Test func vectorFilesAreComplete() {
        #expect(KDFVectors.all.scrypt.count == 4)
        #expect(KDFVectors.all.pbkdf2.count == 8)
        #expect(KDFVectors.all.hkdf.count == 3)
        #expect(WrapVectors.all.kw.count == 6)
        #expect(WrapVectors.all.kwp.count == 2)
    }

    @Test(arguments: KDFVectors.all.scrypt)
    func scrypt(_ v: KDFVectors.Scrypt) throws {
        let key = try KeyDerivation.scrypt(
            password: SecretBytes(bytes(hex: v.password)), salt: bytes(hex: v.salt), n: v.n, r: v.r, p: v.p, length: v.length)
        #expect(hex(key) == v.expected)
    }

    @Test(arguments: KDFVectors.all.pbkdf2)
    func pbkdf2(_ v: KDFVectors.PBKDF2) throws {
        let digest = try #require(KeyDerivation.Digest(rawValue: v.digest))
        let key = try KeyDerivation.pbkdf2(
            password: SecretBytes(bytes(hex: v.password)), salt: bytes(hex: v.salt), iterations: v.iterations, digest: digest,
            length: v.length)
        #expect(hex(key) == v.expected)
    }

    @Test(arguments: KDFVectors.all.hkdf)
    func hkdf(_ v: KDFVectors.HKDF) throws {
        let key = try KeyDerivation.hkdfSHA256(
            key: SecretBytes(bytes(hex: v.ikm)), salt: bytes(hex: v.salt), info: bytes(hex: v.info), length: v.length)
        #expect(hex(key) == v.expected)
    }

    @Test(arguments: WrapVectors.all.kw)
    func keyWrap(_ v: WrapVectors.Vector) throws {
        let kek = SecretBytes(bytes(hex: v.kek))
        let wrapped = try KeyWrap.wrap(SecretBytes(bytes(hex: v.key)), using: kek, mode: .kw)
        #expect(hex(wrapped) == v.expected)
        #expect(hex(try KeyWrap.unwrap(wrapped, using: kek, mode: .kw)) == v.key)
    }

    @Test(arguments: WrapVectors.all.kwp)
    func keyWrapWithPadding(_ v: WrapVectors.Vector) throws {
        let kek = SecretBytes(bytes(hex: v.kek))
        let wrapped = try KeyWrap.wrap(SecretBytes(bytes(hex: v.key)), using: kek, mode: .kwp)
        #expect(hex(wrapped) == v.expected)
        #expect(hex(try KeyWrap.unwrap(wrapped, using: kek, mode: .kwp)) == v.key)
    }
}
