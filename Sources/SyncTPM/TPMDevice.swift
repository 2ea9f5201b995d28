internal import CTSS2
import Foundation
public import SyncKeys

/// A connection to a TPM 2.0 through tpm2-tss's ESAPI, for the key envelope's TPM slot: seal a
/// slot secret into a persistent object, unseal it (with a PIN and a PCR policy when the slot has
/// them), evict it, and read the dictionary-attack parameters. Every return code goes through
/// `tssCheck(_:_:)`.
///
/// The TPM is named by a TCTI configuration string (tpm2-tss's syntax): `device:/dev/tpmrm0` on
/// a device (the kernel's resource manager), `swtpm:host=127.0.0.1,port=P` for a software TPM.
/// It is not a secret. One connection serves one command; it is not shared between threads.
public final class TPMDevice {
    /// The configuration used when none is given: the kernel's TPM resource manager.
    public static let defaultConfiguration = "device:/dev/tpmrm0"
    /// The environment variable the tools read the configuration from (not a secret).
    public static let environmentVariable = "CIPHERSYNC_TCTI"
    /// Where new sealed objects are made persistent: a random handle in
    /// `0x815C0000`…`0x815CFFFF` of the owner's persistent range, another one if it is taken.
    static let handleBase: UInt32 = 0x815C_0000

    /// The configuration string this connection was made with.
    public let configuration: String
    private var tcti: OpaquePointer?
    private var context: OpaquePointer?

    /// Connects to the TPM that `configuration` names.
    ///
    /// - Parameter configuration: A TCTI configuration string.
    /// - Throws: `KeyError.tpmFailure(_:)` when the TPM cannot be reached.
    public init(configuration: String) throws(KeyError) {
        self.configuration = configuration
        var tcti: OpaquePointer?
        guard Tss2_TctiLdr_Initialize(configuration, &tcti) == 0, tcti != nil else {
            throw .tpmFailure("cannot reach the TPM at '\(configuration)'")
        }
        self.tcti = tcti
        var context: OpaquePointer?
        let rc = Esys_Initialize(&context, tcti, nil)
        guard rc == 0 else {
            Tss2_TctiLdr_Finalize(&self.tcti)
            throw tssFailure(rc, "Esys_Initialize at '\(configuration)'")
        }
        self.context = context
    }

    deinit {
        Esys_Finalize(&context)
        Tss2_TctiLdr_Finalize(&tcti)
    }

    /// The TPM's dictionary-attack settings and its current count of failed authorizations.
    public struct LockoutParameters: Sendable, Equatable, Codable {
        /// Failed authorizations counted now (`TPM2_PT_LOCKOUT_COUNTER`).
        public var failedTries: UInt32
        /// Failed authorizations after which the TPM locks out (`TPM2_PT_MAX_AUTH_FAIL`).
        public var maxTries: UInt32
        /// Seconds after which one counted failure is forgotten (`TPM2_PT_LOCKOUT_INTERVAL`); in
        /// lockout, the wait until one more try is allowed.
        public var recoverySeconds: UInt32
        /// Seconds before the lockout authorization may be tried again after it failed
        /// (`TPM2_PT_LOCKOUT_RECOVERY`).
        public var lockoutRecoverySeconds: UInt32
    }

    /// Reads the dictionary-attack parameters.
    ///
    /// - Throws: `KeyError.tpmFailure(_:)`.
    public func lockoutParameters() throws(KeyError) -> LockoutParameters {
        var more: TPMI_YES_NO = 0
        var data: UnsafeMutablePointer<TPMS_CAPABILITY_DATA>?
        try tssCheck(
            Esys_GetCapability(
                context, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPMConstant.capabilityTPMProperties,
                TPMConstant.propertyLockoutCounter, 4, &more, &data), "Esys_GetCapability")
        defer { Esys_Free(data) }
        guard let list = data?.pointee.data.tpmProperties else { throw .tpmFailure("Esys_GetCapability: no data") }
        var values: [UInt32: UInt32] = [:]
        withUnsafeBytes(of: list.tpmProperty) { raw in
            let properties = raw.bindMemory(to: TPMS_TAGGED_PROPERTY.self)
            for index in 0..<min(Int(list.count), properties.count) { values[properties[index].property] = properties[index].value }
        }
        let base = TPMConstant.propertyLockoutCounter
        guard let failed = values[base], let maximum = values[base + 1], let interval = values[base + 2], let recovery = values[base + 3]
        else { throw .tpmFailure("Esys_GetCapability: the TPM did not report its lockout parameters") }
        return LockoutParameters(failedTries: failed, maxTries: maximum, recoverySeconds: interval, lockoutRecoverySeconds: recovery)
    }

    /// The auth value of a sealed object with a PIN: SHA-256 of the PIN in Unicode NFC.
    static func authValue(pin: SecretBytes) throws(KeyError) -> TPM2B_AUTH {
        let normalized = try Passphrase.normalized(pin)
        var bytes = normalized.withUnsafeBytes { Array($0) }
        defer { bytes.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        var digest = try KeyDerivation.sha256(bytes)
        defer { digest.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        var auth = TPM2B_AUTH()
        auth.size = UInt16(digest.count)
        digest.withUnsafeBytes { _ = copyBytes($0, into: &auth.buffer) }
        return auth
    }

    /// Seals `secret` (32 bytes) in a new persistent object of the owner hierarchy.
    ///
    /// The object is created under the storage primary key, loaded and made persistent at a free
    /// handle; its authorization is `pin` (under the dictionary-attack lockout) or nothing, and
    /// with `pcrs` also the current values of those SHA-256 PCRs.
    ///
    /// - Returns: The binding to record in the slot.
    /// - Throws: `KeyError`.
    public func seal(_ secret: SecretBytes, pin: SecretBytes?, pcrs: [Int]) throws(KeyError) -> KeyEnvelope.TPMBinding {
        guard secret.count == 32 else { throw .invalidKeyLength(secret.count) }
        let primary = try createPrimary()
        defer { _ = Esys_FlushContext(context, primary) }
        let policy = pcrs.isEmpty ? nil : try policyDigest(pcrs: pcrs, withPIN: pin != nil)
        var sensitive = TPM2B_SENSITIVE_CREATE()
        defer { wipe(&sensitive) }
        if let pin {
            sensitive.sensitive.userAuth = try Self.authValue(pin: pin)
        }
        sensitive.sensitive.data.size = UInt16(secret.count)
        secret.withUnsafeBytes { _ = copyBytes($0, into: &sensitive.sensitive.data.buffer) }
        var template = TPMTemplate.sealedObject(policy: policy, hasPIN: pin != nil)
        var outsideInfo = TPM2B_DATA()
        var creationPCR = TPML_PCR_SELECTION()
        var privatePart: UnsafeMutablePointer<TPM2B_PRIVATE>?
        var publicPart: UnsafeMutablePointer<TPM2B_PUBLIC>?
        defer {
            Esys_Free(privatePart)
            Esys_Free(publicPart)
        }
        try tssCheck(
            Esys_Create(
                context, primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template, &outsideInfo, &creationPCR,
                &privatePart, &publicPart, nil, nil, nil), "Esys_Create")
        var loaded: ESYS_TR = ESYS_TR_NONE
        try tssCheck(
            Esys_Load(context, primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, privatePart, publicPart, &loaded), "Esys_Load")
        defer { _ = Esys_FlushContext(context, loaded) }
        var (handle, persistent) = try persist(loaded)
        defer { _ = Esys_TR_Close(context, &persistent) }
        return KeyEnvelope.TPMBinding(handle: handle, name: try name(of: persistent), pin: pin != nil, pcrs: pcrs)
    }

    /// Unseals the secret of the object `binding` names, after checking that the object at its
    /// handle has its Name.
    ///
    /// - Parameters:
    ///   - binding: The slot's binding.
    ///   - pin: The PIN, when the slot has one.
    /// - Returns: The 32-byte secret.
    /// - Throws: `KeyError.tpmKeyMissing` (no such object here), `KeyError.wrongPIN`,
    ///   `KeyError.tpmLockedOut`, `KeyError.tpmPolicyRefused`, `KeyError.tpmFailure(_:)`.
    public func unseal(_ binding: KeyEnvelope.TPMBinding, pin: SecretBytes?) throws(KeyError) -> SecretBytes {
        guard binding.pin == (pin != nil) else { throw binding.pin ? .wrongPIN : .tpmFailure("this TPM slot has no PIN") }
        guard let handle = binding.handleValue else { throw .envelopeCorrupt("invalid TPM handle") }
        var object = try persistentObject(handle: handle, name: binding.name)
        defer { _ = Esys_TR_Close(context, &object) }
        if let pin {
            var auth = try Self.authValue(pin: pin)
            defer { wipe(&auth) }
            try tssCheck(Esys_TR_SetAuth(context, object, &auth), "Esys_TR_SetAuth")
        }
        var session = ESYS_TR_PASSWORD
        if !binding.pcrs.isEmpty {
            session = try policySession(pcrs: binding.pcrs, withPIN: binding.pin, trial: false)
        }
        defer { if session != ESYS_TR_PASSWORD { _ = Esys_FlushContext(context, session) } }
        var data: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
        defer {
            if let data { wipe(&data.pointee) }
            Esys_Free(data)
        }
        try tssCheck(Esys_Unseal(context, object, session, ESYS_TR_NONE, ESYS_TR_NONE, &data), "Esys_Unseal")
        guard let sealed = data?.pointee, sealed.size == 32 else { throw .tpmKeyMissing }
        return SecretBytes(count: 32) { buffer in
            withUnsafeBytes(of: sealed.buffer) { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<32])) }
        }
    }

    /// Evicts the persistent object at `handle` if it is the one named `name`.
    ///
    /// - Returns: Whether an object was evicted (`false`: nothing, or another object, is there).
    /// - Throws: `KeyError.tpmFailure(_:)`.
    @discardableResult
    public func evict(handle: String, name: String) throws(KeyError) -> Bool {
        guard let value = KeyEnvelope.TPMBinding.handleValue(of: handle) else { return false }
        var object: ESYS_TR
        do {
            object = try persistentObject(handle: value, name: name)
        } catch .tpmKeyMissing {
            return false
        }
        var evicted: ESYS_TR = ESYS_TR_NONE
        let rc = Esys_EvictControl(context, ESYS_TR_RH_OWNER, object, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, value, &evicted)
        if rc != 0 { _ = Esys_TR_Close(context, &object) }
        try tssCheck(rc, "Esys_EvictControl")
        return true
    }

    /// The object at `handle`, when its Name is `name`.
    private func persistentObject(handle: UInt32, name expected: String) throws(KeyError) -> ESYS_TR {
        var object: ESYS_TR = ESYS_TR_NONE
        let rc = Esys_TR_FromTPMPublic(context, handle, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &object)
        guard rc == 0 else {
            let error = tssFailure(rc, "Esys_TR_FromTPMPublic")
            throw error == .tpmKeyMissing || TPMResponse.base(of: rc) != nil ? .tpmKeyMissing : error
        }
        let found: String
        do {
            found = try name(of: object)
        } catch {
            _ = Esys_TR_Close(context, &object)
            throw error
        }
        guard found == expected else {
            _ = Esys_TR_Close(context, &object)
            throw .tpmKeyMissing
        }
        return object
    }

    /// The storage primary key, loaded (transient).
    private func createPrimary() throws(KeyError) -> ESYS_TR {
        var sensitive = TPM2B_SENSITIVE_CREATE()
        var template = TPMTemplate.storagePrimary()
        var outsideInfo = TPM2B_DATA()
        var creationPCR = TPML_PCR_SELECTION()
        var primary: ESYS_TR = ESYS_TR_NONE
        try tssCheck(
            Esys_CreatePrimary(
                context, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template, &outsideInfo,
                &creationPCR, &primary, nil, nil, nil, nil), "Esys_CreatePrimary")
        return primary
    }

    /// Makes `loaded` persistent at a free handle.
    private func persist(_ loaded: ESYS_TR) throws(KeyError) -> (UInt32, ESYS_TR) {
        for _ in 0..<16 {
            let handle = Self.handleBase | UInt32.random(in: 0...0xFFFF)
            var persistent: ESYS_TR = ESYS_TR_NONE
            let rc = Esys_EvictControl(context, ESYS_TR_RH_OWNER, loaded, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, handle, &persistent)
            if TPMResponse.base(of: rc) == TPMResponse.nvDefined { continue }
            try tssCheck(rc, "Esys_EvictControl")
            return (handle, persistent)
        }
        throw .tpmFailure("no free persistent handle")
    }

    /// The TPM Name of `object`, lowercase hex.
    private func name(of object: ESYS_TR) throws(KeyError) -> String {
        var name: UnsafeMutablePointer<TPM2B_NAME>?
        defer { Esys_Free(name) }
        try tssCheck(Esys_TR_GetName(context, object, &name), "Esys_TR_GetName")
        guard let value = name?.pointee else { throw .tpmFailure("Esys_TR_GetName: no name") }
        return bytes(of: value.name, count: Int(value.size)).map { String(format: "%02x", $0) }.joined()
    }

    /// The policy digest of a PCR policy (and the PIN, when the slot has one), from a trial session.
    private func policyDigest(pcrs: [Int], withPIN: Bool) throws(KeyError) -> [UInt8] {
        let session = try policySession(pcrs: pcrs, withPIN: withPIN, trial: true)
        defer { _ = Esys_FlushContext(context, session) }
        var digest: UnsafeMutablePointer<TPM2B_DIGEST>?
        defer { Esys_Free(digest) }
        try tssCheck(Esys_PolicyGetDigest(context, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &digest), "Esys_PolicyGetDigest")
        guard let value = digest?.pointee else { throw .tpmFailure("Esys_PolicyGetDigest: no digest") }
        return bytes(of: value.buffer, count: Int(value.size))
    }

    /// A policy session (or a trial one) that has run PolicyPCR over the current values of `pcrs`
    /// and, with a PIN, PolicyAuthValue.
    private func policySession(pcrs: [Int], withPIN: Bool, trial: Bool) throws(KeyError) -> ESYS_TR {
        var symmetric = TPMT_SYM_DEF()
        symmetric.algorithm = TPMConstant.algNull
        var session: ESYS_TR = ESYS_TR_NONE
        try tssCheck(
            Esys_StartAuthSession(
                context, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, nil,
                trial ? TPMConstant.sessionTrial : TPMConstant.sessionPolicy, &symmetric, TPMConstant.algSHA256, &session),
            "Esys_StartAuthSession")
        do throws(KeyError) {
            var current = TPM2B_DIGEST()
            var selection = TPMTemplate.pcrSelection(pcrs)
            try tssCheck(Esys_PolicyPCR(context, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &current, &selection), "Esys_PolicyPCR")
            if withPIN {
                try tssCheck(Esys_PolicyAuthValue(context, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE), "Esys_PolicyAuthValue")
            }
        } catch {
            _ = Esys_FlushContext(context, session)
            throw error
        }
        return session
    }
}
