internal import CTSS2
import SyncKeys

/// The TPM 2.0 response codes the slot code tells apart (TCG TPM 2.0 Library, Part 2, §6.6),
/// compared after the parameter, handle and session numbers are masked off.
enum TPMResponse {
    /// Format 1: the authorization failed and the dictionary-attack counter was incremented.
    static let authFail: UInt32 = 0x08E
    /// Format 1: the authorization failed without dictionary-attack implications.
    static let badAuth: UInt32 = 0x0A2
    /// Format 1: a policy check failed.
    static let policyFail: UInt32 = 0x09D
    /// Format 1: the handle is not correct for the use (no object there).
    static let handle: UInt32 = 0x08B
    /// Warning: objects under dictionary-attack protection are refused (lockout).
    static let lockout: UInt32 = 0x921
    /// Format 0: the PCR values changed during a policy session.
    static let pcrChanged: UInt32 = 0x128
    /// Format 0: the persistent handle is already in use.
    static let nvDefined: UInt32 = 0x14C

    /// The response code of a TPM-layer `rc` without its parameter, handle or session number, or
    /// `nil` when `rc` comes from a software layer (ESAPI, the TCTI, a resource manager).
    static func base(of rc: TSS2_RC) -> UInt32? {
        guard rc >> 16 == 0 else { return nil }
        let code = rc & 0xFFFF
        return code & 0x80 != 0 ? code & 0xBF : code & 0x97F
    }
}

/// The one chokepoint for tpm2-tss return codes: anything but `TSS2_RC_SUCCESS` throws.
///
/// - Parameters:
///   - rc: The return code of an ESAPI or TCTI call.
///   - operation: The call, for the message.
/// - Throws: The `KeyError` of `tssFailure(_:_:)`.
func tssCheck(_ rc: TSS2_RC, _ operation: String) throws(KeyError) {
    guard rc != 0 else { return }
    throw tssFailure(rc, operation)
}

/// The error for a failed tpm2-tss call: a wrong PIN, a lockout, a refused policy and a missing
/// object are told apart; anything else names the call and the decoded return code (which never
/// holds a secret).
func tssFailure(_ rc: TSS2_RC, _ operation: String) -> KeyError {
    switch TPMResponse.base(of: rc) {
    case TPMResponse.authFail, TPMResponse.badAuth: return .wrongPIN
    case TPMResponse.lockout: return .tpmLockedOut
    case TPMResponse.policyFail, TPMResponse.pcrChanged: return .tpmPolicyRefused
    case TPMResponse.handle: return .tpmKeyMissing
    default:
        let decoded = Tss2_RC_Decode(rc).map { String(cString: $0) } ?? "unknown"
        return .tpmFailure("\(operation): \(decoded), 0x\(String(rc, radix: 16))")
    }
}
