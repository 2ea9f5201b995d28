public import Foundation

extension KeyEnvelope {
    /// A copy with a TPM slot (added, or replacing the one there) whose secret is `sealedSecret`,
    /// the 32 bytes sealed in the TPM object that `binding` names.
    ///
    /// - Parameters:
    ///   - sealedSecret: The secret sealed in the TPM (32 random bytes).
    ///   - binding: The sealed object's handle, Name and policy.
    ///   - envelopeKey: The unlocked envelope key.
    ///   - now: The creation time recorded.
    /// - Throws: ``KeyError/envelopeCorrupt(_:)`` when `envelopeKey` does not authenticate the
    ///   envelope; ``KeyError/invalidKeyLength(_:)`` for a secret that is not 32 bytes.
    public func withTPMSlot(
        sealedSecret: SecretBytes, binding: TPMBinding, envelopeKey: SecretBytes, now: Date = Date()
    ) throws(KeyError) -> KeyEnvelope {
        guard sealedSecret.count == 32 else { throw .invalidKeyLength(sealedSecret.count) }
        try verifyMAC(envelopeKey: envelopeKey)
        let slot = try Self.makeTPMSlot(sealedSecret: sealedSecret, binding: binding, envelopeKey: envelopeKey, now: now)
        var copy = self
        if let index = copy.slots.firstIndex(where: { $0.id == slot.id }) {
            copy.slots[index] = slot
        } else {
            copy.slots.append(slot)
        }
        try copy.seal(envelopeKey: envelopeKey)
        return copy
    }

    /// A copy without slot `id`. The last slot cannot be removed (that is shredding).
    ///
    /// - Throws: ``KeyError/slotMissing(_:)`` when there is no such slot,
    ///   ``KeyError/envelopeCorrupt(_:)`` when it is the last one or `envelopeKey` does not
    ///   authenticate the envelope.
    package func removingSlot(_ id: String, envelopeKey: SecretBytes) throws(KeyError) -> KeyEnvelope {
        try verifyMAC(envelopeKey: envelopeKey)
        guard slots.contains(where: { $0.id == id }) else { throw .slotMissing(id) }
        guard slots.count > 1 else { throw .envelopeCorrupt("the last key slot cannot be removed; shred the store instead") }
        var copy = self
        copy.slots.removeAll { $0.id == id }
        try copy.seal(envelopeKey: envelopeKey)
        return copy
    }
}
