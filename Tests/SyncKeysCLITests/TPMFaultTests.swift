import Foundation
import SyncKeyMaintenance
import SyncKeys
import SyncStore
import SyncTestSupport
import Testing

/// Kill -9 while a TPM slot is added, a slot removed, the store shredded, and a rotation runs
/// through the TPM slot, at every step the tools report (33 points). After each kill the store
/// opens by the slots it had or by the new set, never by a half of it; a shred leaves all slots
/// (killed before anything changed) or none; the command run again finishes. After a kill the
/// TPM's transient objects are flushed, as the kernel's resource manager does for a dead process.
@Suite struct TPMSlotFaultTests {
    static let pin = "8642"
    static let newPIN = "1357"

    @Test func killedWhileAddingATPMSlotTheStoreOpensByTheOldSlotsOrTheNewOne() throws {
        let store = try TPMFixture.make()
        defer { store.remove() }
        for step in ["locked", "tpm-sealed", "envelope-written"] {
            let killed = try store.run("add-tpm-slot", environment: [FaultHook.variable: step])
            #expect(killed.wasKilled, "\(step): \(killed)")
            try store.tpm.flushTransients()
            #expect(try store.opens("passphrase"), "\(step)")
            let added = try store.status().slots.contains { $0.id == "tpm" }
            #expect(added == (step == "envelope-written"), "\(step)")
            #expect(try store.opens("tpm") == added, "\(step)")
            if added {
                #expect(try store.run("remove-slot", ["--slot", "tpm"]).exitCode == 0)
            }
        }
        // Replacing a slot that has a PIN by one with another PIN.
        try store.addSlot(pin: Self.pin)
        var currentPIN = Self.pin
        for step in ["locked", "tpm-sealed", "envelope-written", "tpm-evicted"] {
            let old = try #require(try store.status().slots.first { $0.id == "tpm" }?.tpm)
            let killed = try store.run(
                "add-tpm-slot", ["--pin", "--new-pin-fd", "3"], pin: currentPIN == Self.pin ? Self.newPIN : Self.pin,
                environment: [FaultHook.variable: step])
            #expect(killed.wasKilled, "\(step): \(killed)")
            try store.tpm.flushTransients()
            #expect(try store.opens("passphrase"), "\(step)")
            let now = try #require(try store.status().slots.first { $0.id == "tpm" }?.tpm)
            let replaced = step == "envelope-written" || step == "tpm-evicted"
            #expect((now.handle != old.handle) == replaced, "\(step)")
            if replaced { currentPIN = currentPIN == Self.pin ? Self.newPIN : Self.pin }
            #expect(try store.opens("tpm", pin: currentPIN), "\(step): the slot in the envelope opens with its PIN")
        }
    }

    @Test func killedWhileRemovingASlotTheStoreOpensByTheSlotsLeft() throws {
        let store = try TPMFixture.make()
        defer { store.remove() }
        try store.addRecoveryCode()
        for step in ["locked", "tpm-evicted", "envelope-written"] {
            let binding = try store.addSlot()
            let killed = try store.run("remove-slot", ["--slot", "tpm"], environment: [FaultHook.variable: step])
            #expect(killed.wasKilled, "\(step): \(killed)")
            try store.tpm.flushTransients()
            #expect(try store.opens("passphrase") && store.opens("recovery"), "\(step)")
            let listed = try store.status().slots.contains { $0.id == "tpm" }
            #expect(listed == (step != "envelope-written"), "\(step)")
            #expect(try store.tpm.persistentHandles().contains(binding.handle) == (step == "locked"), "\(step): evicted first")
            #expect(try store.opens("tpm") == (step == "locked"), "\(step)")
            if listed {
                #expect(try store.run("remove-slot", ["--slot", "tpm"]).exitCode == 0, "\(step): removing again finishes")
            }
            #expect(try !store.status().slots.contains { $0.id == "tpm" })
        }
        try store.addSlot()
        let throughTPM: [String: String?] = ["CIPHERSYNC_PASSPHRASE": nil]
        for (slot, step) in [("recovery", "locked"), ("recovery", "envelope-written"), ("passphrase", "locked"), ("passphrase", "envelope-written")] {
            let killed = try store.run(
                "remove-slot", ["--slot", slot, "--unlock", "tpm"], environment: throughTPM.merging([FaultHook.variable: step]) { $1 })
            #expect(killed.wasKilled, "\(slot) \(step): \(killed)")
            try store.tpm.flushTransients()
            #expect(try store.opens("tpm"), "\(slot) \(step)")
            #expect(try store.opens(slot) == (step == "locked"), "\(slot) \(step)")
        }
    }

    @Test func killedWhileShreddingTheStoreOpensByAllItsSlotsOrByNone() throws {
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        for step in ["locked", "envelope-overwritten", "tpm-evicted"] {
            let store = try TPMFixture.make(on: tpm)
            defer { store.remove() }
            let binding = try store.addSlot()
            let killed = try store.run("shred", ["--yes"], environment: [FaultHook.variable: step])
            #expect(killed.wasKilled, "\(step): \(killed)")
            try tpm.flushTransients()
            let before = step == "locked"
            #expect(try store.opens("passphrase") == before && store.opens("tpm") == before, "\(step): all slots or none")
            #expect(try tpm.persistentHandles().contains(binding.handle) == (step != "tpm-evicted"), "\(step)")
            #expect(try store.run("shred", ["--yes"]).exitCode == 0, "\(step): shredding again finishes")
            #expect(try !store.opens("passphrase") && !store.opens("tpm"), "\(step)")
            #expect(try !tpm.persistentHandles().contains(binding.handle), "\(step)")
        }
    }

    @Test func killedDuringARotationThroughTheTPMSlotTheSlotKeepsWorking() async throws {
        let template = try TPMFixture.make()
        defer { template.remove() }
        let opened = try await template.fixture.open()
        try await Workload.fill(opened, rows: 400, operations: 40)
        try await opened.close()
        try template.addSlot()
        let throughTPM: [String: String?] = ["CIPHERSYNC_PASSPHRASE": nil]
        let points = RotationFaultTests.steps.map(\.rawValue) + (1...4).map { "progress:\($0)" }
        for point in points {
            let store = TPMFixture(fixture: try Fixture.copy(of: template.fixture), tpm: template.tpm, ownsTPM: false)
            defer { store.remove() }
            let oldKey = try store.fixture.keys().dataKey
            let killed = try store.run("rotate", ["--unlock", "tpm"], environment: throughTPM.merging([FaultHook.variable: point]) { $1 })
            #expect(killed.wasKilled, "\(point): \(killed)")
            try store.tpm.flushTransients()
            let again = try store.run("rotate", ["--unlock", "tpm"], environment: throughTPM)
            #expect(again.exitCode == 0, "\(point): \(again)")
            #expect(try store.fixture.keys().dataKey != oldKey, "\(point)")
            #expect(try store.fixture.fileOpened(by: oldKey) == nil, "\(point): the old data key opens nothing")
            #expect(try store.opens("tpm") && store.opens("passphrase"), "\(point)")
        }
    }
}
