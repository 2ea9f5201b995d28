internal import CTSS2
import SyncKeys

/// The TPM 2.0 constants the slot code uses (TCG TPM 2.0 Library, Part 2). tpm2-tss defines them
/// as cast macros, which Swift does not import.
enum TPMConstant {
    static let algSHA256: UInt16 = 0x000B
    static let algNull: UInt16 = 0x0010
    static let algKeyedHash: UInt16 = 0x0008
    static let algECC: UInt16 = 0x0023
    static let algAES: UInt16 = 0x0006
    static let algCFB: UInt16 = 0x0043
    static let curveP256: UInt16 = 0x0003

    static let fixedTPM: UInt32 = 0x0000_0002
    static let fixedParent: UInt32 = 0x0000_0010
    static let sensitiveDataOrigin: UInt32 = 0x0000_0020
    static let userWithAuth: UInt32 = 0x0000_0040
    static let noDA: UInt32 = 0x0000_0400
    static let restricted: UInt32 = 0x0001_0000
    static let decrypt: UInt32 = 0x0002_0000

    static let sessionPolicy: UInt8 = 0x01
    static let sessionTrial: UInt8 = 0x03
    static let capabilityTPMProperties: UInt32 = 0x0000_0006
    /// `TPM2_PT_LOCKOUT_COUNTER`; `MAX_AUTH_FAIL`, `LOCKOUT_INTERVAL`, `LOCKOUT_RECOVERY` follow.
    static let propertyLockoutCounter: UInt32 = 0x0000_020E
}

/// Copies `bytes` into the start of a C array imported as a tuple.
///
/// - Returns: `false` (nothing copied) when they do not fit.
@discardableResult
func copyBytes<T>(_ bytes: UnsafeRawBufferPointer, into tuple: inout T) -> Bool {
    guard bytes.count <= MemoryLayout<T>.size else { return false }
    withUnsafeMutableBytes(of: &tuple) { destination in
        UnsafeMutableRawBufferPointer(rebasing: destination[0..<bytes.count]).copyMemory(from: bytes)
    }
    return true
}

/// The first `count` bytes of a C array imported as a tuple.
func bytes<T>(of tuple: T, count: Int) -> [UInt8] {
    withUnsafeBytes(of: tuple) { Array($0.prefix(count)) }
}

/// Wipes a C structure that held a secret.
func wipe<T>(_ value: inout T) {
    withUnsafeMutableBytes(of: &value) { SecretBytes.wipe($0) }
}

enum TPMTemplate {
    /// The storage primary key every slot's sealed object is created under: the TCG's ECC P-256
    /// storage root template (restricted decryption, AES-128-CFB), empty unique field, so that the
    /// owner hierarchy yields the same key every time.
    static func storagePrimary() -> TPM2B_PUBLIC {
        var template = TPM2B_PUBLIC()
        template.publicArea.type = TPMConstant.algECC
        template.publicArea.nameAlg = TPMConstant.algSHA256
        template.publicArea.objectAttributes =
            TPMConstant.fixedTPM | TPMConstant.fixedParent | TPMConstant.sensitiveDataOrigin | TPMConstant.userWithAuth
            | TPMConstant.noDA | TPMConstant.restricted | TPMConstant.decrypt
        template.publicArea.parameters.eccDetail.symmetric.algorithm = TPMConstant.algAES
        template.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128
        template.publicArea.parameters.eccDetail.symmetric.mode.aes = TPMConstant.algCFB
        template.publicArea.parameters.eccDetail.scheme.scheme = TPMConstant.algNull
        template.publicArea.parameters.eccDetail.curveID = TPMConstant.curveP256
        template.publicArea.parameters.eccDetail.kdf.scheme = TPMConstant.algNull
        return template
    }

    /// A sealed data object: fixed to this TPM and parent; authorized by its auth value (a PIN's
    /// digest, or empty) unless a PCR policy is given, which then is the only way; under the
    /// dictionary-attack lockout only when it has a PIN.
    static func sealedObject(policy: [UInt8]?, hasPIN: Bool) -> TPM2B_PUBLIC {
        var template = TPM2B_PUBLIC()
        template.publicArea.type = TPMConstant.algKeyedHash
        template.publicArea.nameAlg = TPMConstant.algSHA256
        var attributes = TPMConstant.fixedTPM | TPMConstant.fixedParent
        if policy == nil { attributes |= TPMConstant.userWithAuth }
        if !hasPIN { attributes |= TPMConstant.noDA }
        template.publicArea.objectAttributes = attributes
        if let policy {
            template.publicArea.authPolicy.size = UInt16(policy.count)
            policy.withUnsafeBytes { _ = copyBytes($0, into: &template.publicArea.authPolicy.buffer) }
        }
        template.publicArea.parameters.keyedHashDetail.scheme.scheme = TPMConstant.algNull
        return template
    }

    /// The selection of `pcrs` in the SHA-256 bank.
    static func pcrSelection(_ pcrs: [Int]) -> TPML_PCR_SELECTION {
        var selection = TPML_PCR_SELECTION()
        selection.count = 1
        selection.pcrSelections.0.hash = TPMConstant.algSHA256
        selection.pcrSelections.0.sizeofSelect = 3
        withUnsafeMutableBytes(of: &selection.pcrSelections.0.pcrSelect) { select in
            for pcr in pcrs where (0..<24).contains(pcr) { select[pcr / 8] |= UInt8(1 << (pcr % 8)) }
        }
        return selection
    }
}
