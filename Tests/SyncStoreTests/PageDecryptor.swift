import COpenSSL
import Foundation
import SyncKeys

/// Decrypts every page of a CipherSync database with its data key, independently of SQLCipher,
/// so tests can look at what the pages really hold (SQLCipher 3 layout, 4096-byte pages: AES-256-CBC
/// over the page minus a 48-byte reserve whose first 16 bytes are the IV; page 1 starts after the
/// 16-byte salt).
enum PageDecryptor {
    static let pageSize = 4096
    static let reserve = 48

    struct Failure: Error {}

    static func decrypt(file: URL, key: SecretBytes) throws -> [UInt8] {
        let bytes = [UInt8](try Data(contentsOf: file))
        var plaintext: [UInt8] = []
        var page = 0
        while (page + 1) * pageSize <= bytes.count {
            let start = page * pageSize
            let offset = page == 0 ? 16 : 0
            let ivStart = start + pageSize - reserve
            let cipher = Array(bytes[(start + offset)..<ivStart])
            let iv = Array(bytes[ivStart..<(ivStart + 16)])
            plaintext += try aes256CBCDecrypt(cipher, key: key, iv: iv)
            page += 1
        }
        return plaintext
    }

    static func aes256CBCDecrypt(_ input: [UInt8], key: SecretBytes, iv: [UInt8]) throws -> [UInt8] {
        guard let ctx = EVP_CIPHER_CTX_new() else { throw Failure() }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var output = [UInt8](repeating: 0, count: input.count + 32)
        var written: Int32 = 0, final: Int32 = 0
        let ok = key.withUnsafeBytes { keyBytes in
            iv.withUnsafeBufferPointer { ivBytes in
                EVP_DecryptInit_ex(
                    ctx, EVP_aes_256_cbc(), nil, keyBytes.bindMemory(to: UInt8.self).baseAddress, ivBytes.baseAddress)
            }
        }
        guard ok == 1, EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 else { throw Failure() }
        guard EVP_DecryptUpdate(ctx, &output, &written, input, Int32(input.count)) == 1 else { throw Failure() }
        let finalOK = output.withUnsafeMutableBufferPointer { EVP_DecryptFinal_ex(ctx, $0.baseAddress! + Int(written), &final) }
        guard finalOK == 1 else { throw Failure() }
        return Array(output.prefix(Int(written + final)))
    }
}
