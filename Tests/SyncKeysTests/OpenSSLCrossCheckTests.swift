import Foundation
import SyncKeys
import SyncTestSupport
import Testing

/// Our bindings against the `openssl` command-line tool on random inputs (C18, C19).
@Suite struct OpenSSLCrossCheckTests {
    static let openssl = "/usr/bin/openssl"

    func cli(_ arguments: [String], input: [UInt8] = []) throws -> [UInt8] {
        let result = try runProgram(Self.openssl, arguments, input: input)
        #expect(result.status == 0)
        return result.outputBytes
    }

    @Test func pbkdf2SHA512MatchesTheCLI() throws {
        for _ in 0..<20 {
            let password = randomBytes(Int.random(in: 1...40)), salt = randomBytes(Int.random(in: 16...32))
            let iterations = Int.random(in: 1...3000), length = Int.random(in: 16...64)
            let ours = try KeyDerivation.pbkdf2(password: SecretBytes(password), salt: salt, iterations: iterations, digest: .sha512, length: length)
            let theirs = try cli([
                "kdf", "-binary", "-keylen", "\(length)", "-kdfopt", "digest:SHA512", "-kdfopt", "hexpass:\(hex(password))",
                "-kdfopt", "hexsalt:\(hex(salt))", "-kdfopt", "iter:\(iterations)", "PBKDF2",
            ])
            #expect(hex(ours) == hex(theirs))
        }
    }

    @Test func scryptMatchesTheCLI() throws {
        for _ in 0..<20 {
            let password = randomBytes(Int.random(in: 1...40)), salt = randomBytes(16)
            let n = UInt64(1) << UInt64.random(in: 4...10), r = UInt64.random(in: 1...8), p = UInt64.random(in: 1...2)
            let ours = try KeyDerivation.scrypt(password: SecretBytes(password), salt: salt, n: n, r: r, p: p, length: 32)
            let theirs = try cli([
                "kdf", "-binary", "-keylen", "32", "-kdfopt", "hexpass:\(hex(password))", "-kdfopt", "hexsalt:\(hex(salt))",
                "-kdfopt", "n:\(n)", "-kdfopt", "r:\(r)", "-kdfopt", "p:\(p)", "SCRYPT",
            ])
            #expect(hex(ours) == hex(theirs))
        }
    }

    @Test func hkdfMatchesTheCLI() throws {
        for _ in 0..<20 {
            let ikm = randomBytes(Int.random(in: 16...64)), salt = randomBytes(Int.random(in: 1...32)), info = randomBytes(Int.random(in: 1...40))
            let length = Int.random(in: 16...80)
            let ours = try KeyDerivation.hkdfSHA256(key: SecretBytes(ikm), salt: salt, info: info, length: length)
            let theirs = try cli([
                "kdf", "-binary", "-keylen", "\(length)", "-kdfopt", "digest:SHA256", "-kdfopt", "hexkey:\(hex(ikm))",
                "-kdfopt", "hexsalt:\(hex(salt))", "-kdfopt", "hexinfo:\(hex(info))", "HKDF",
            ])
            #expect(hex(ours) == hex(theirs))
        }
    }

    @Test func aes256KeyWrapWithPaddingMatchesTheCLI() throws {
        for _ in 0..<20 {
            let kek = randomBytes(32), key = randomBytes(Int.random(in: 1...64))
            let ours = try KeyWrap.wrap(SecretBytes(key), using: SecretBytes(kek), mode: .kwp)
            let theirs = try cli(["enc", "-id-aes256-wrap-pad", "-K", hex(kek), "-iv", "A65959A6"], input: key)
            #expect(hex(ours) == hex(theirs))
            let back = try cli(["enc", "-d", "-id-aes256-wrap-pad", "-K", hex(kek), "-iv", "A65959A6"], input: ours)
            #expect(back == key)
        }
    }
}
