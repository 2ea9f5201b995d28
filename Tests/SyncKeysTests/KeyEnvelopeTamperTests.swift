import Foundation
import SyncKeys
import Testing

/// Changes to an envelope file are refused (C21), each with its own error.
@Suite struct KeyEnvelopeTamperTests {
    /// The envelope as a mutable JSON object.
    func object(_ envelope: KeyEnvelope) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: envelope.encoded()) as? [String: Any])
    }

    /// Re-encodes `object`, recomputing the checksum when `fixDigest` (as a careful attacker would).
    func decode(_ object: [String: Any], fixDigest: Bool) throws(KeyError) -> KeyEnvelope {
        var object = object
        if fixDigest {
            var canonical = object
            canonical.removeValue(forKey: "digest")
            canonical.removeValue(forKey: "mac")
            let bytes = [UInt8]((try? JSONSerialization.data(withJSONObject: canonical, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data())
            object["digest"] = try KeyDerivation.sha256(bytes).map { String(format: "%02x", $0) }.joined()
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return try KeyEnvelope.decode(data)
    }

    func slotEdit(_ object: inout [String: Any], _ change: (inout [String: Any]) -> Void) {
        var slots = object["slots"] as? [[String: Any]] ?? []
        var kdf = slots[0]["kdf"] as? [String: Any] ?? [:]
        change(&kdf)
        slots[0]["kdf"] = kdf
        object["slots"] = slots
    }

    @Test func aNaiveEditFailsTheChecksum() throws {
        let secret = passphrase()
        let (envelope, _) = try KeyEnvelope.create(passphrase: secret, profile: .insecureTest, allowInsecureProfile: true)
        var edited = try object(envelope)
        edited["state"] = "rotating"
        expectKeyError(.envelopeCorrupt("checksum mismatch")) { try decode(edited, fixDigest: false) }
    }

    @Test func loweredKDFBelowTheFloorIsRefusedBeforeDeriving() throws {
        let secret = passphrase()
        let (envelope, _) = try KeyEnvelope.create(passphrase: secret, profile: .pbkdf2SHA512)
        var edited = try object(envelope)
        slotEdit(&edited) { $0["iterations"] = 1000 }
        let tampered = try decode(edited, fixDigest: true)
        #expect(throws: KeyError.self) { try tampered.unlock(passphrase: secret) }
        do {
            _ = try tampered.unlock(passphrase: secret)
        } catch .weakKeyDerivation {
        } catch {
            Issue.record("expected weakKeyDerivation, got \(error)")
        }
    }

    @Test func changedSaltOrParametersNoLongerUnwrap() throws {
        let secret = passphrase()
        let (envelope, _) = try KeyEnvelope.create(passphrase: secret, profile: .pbkdf2SHA512)
        for change in [{ (kdf: inout [String: Any]) in kdf["iterations"] = 230_000 }, { $0["salt"] = Data(randomBytes(32)).base64EncodedString() }] {
            var edited = try object(envelope)
            slotEdit(&edited, change)
            #expect(throws: KeyError.wrongPassphrase) { try decode(edited, fixDigest: true).unlock(passphrase: secret) }
        }
    }

    @Test func changedHeaderFieldsFailTheMAC() throws {
        let secret = passphrase()
        let (envelope, _) = try KeyEnvelope.create(passphrase: secret, profile: .insecureTest, allowInsecureProfile: true)
        let edits: [(inout [String: Any]) -> Void] = [
            { $0["keyId"] = "another" },
            { $0["keyCreatedAt"] = "2001-01-01T00:00:00Z" },
            { $0["mac"] = Data(randomBytes(32)).base64EncodedString() },
        ]
        for edit in edits {
            var edited = try object(envelope)
            edit(&edited)
            expectKeyError(.envelopeCorrupt("authentication failed")) {
                try decode(edited, fixDigest: true).unlock(passphrase: secret, allowInsecureProfile: true)
            }
        }
    }

    @Test func unsupportedVersionFormatOrProfileIsRefused() throws {
        let (envelope, _) = try KeyEnvelope.create(passphrase: passphrase(), profile: .insecureTest, allowInsecureProfile: true)
        var version = try object(envelope)
        version["version"] = 2
        expectKeyError(.unsupportedEnvelopeVersion(2)) { try decode(version, fixDigest: true) }
        var format = try object(envelope)
        format["format"] = "something-else"
        expectKeyError(.envelopeCorrupt("not a key envelope")) { try decode(format, fixDigest: true) }
        var page = try object(envelope)
        var cipher = page["cipher"] as? [String: Any] ?? [:]
        cipher["pageSize"] = 1024
        page["cipher"] = cipher
        expectKeyError(.envelopeCorrupt("unsupported database profile")) { try decode(page, fixDigest: true) }
        var rotating = try object(envelope)
        rotating["state"] = "rotating"
        expectKeyError(.envelopeCorrupt("inconsistent rotation state")) { try decode(rotating, fixDigest: true) }
    }

    @Test func garbageIsNotAnEnvelope() {
        for text in ["", "{", "[]", "{\"format\":\"ciphersync-key-envelope\",\"version\":1}", String(repeating: "x", count: 70_000)] {
            #expect(throws: KeyError.self) { try KeyEnvelope.decode(Data(text.utf8)) }
        }
    }

    @Test func profilesFileMatchesTheCode() throws {
        struct File: Decodable {
            struct Profile: Decodable {
                var name: String, algorithm: String, n: UInt64?, r: UInt64?, p: UInt64?, iterations: Int?, saltLength: Int
            }
            var profiles: [Profile]
        }
        let file = try loadJSON(File.self, "Keys/profiles.json")
        #expect(file.profiles.map(\.name) == KeyProfile.all.map(\.name))
        for (documented, coded) in zip(file.profiles, KeyProfile.all) {
            #expect(documented.algorithm == coded.algorithm.rawValue)
            #expect(documented.n == coded.n && documented.r == coded.r && documented.p == coded.p)
            #expect(documented.iterations == coded.iterations && documented.saltLength == coded.saltLength)
        }
    }
}
