import Foundation
import HTTPTypes
import SyncServer
import SyncTestSupport
import SyncWire
import Testing

/// `JWTVerifier`: the tokens it accepts, and each class of token it refuses.
@Suite struct JWTVerifierTests {
    @Test func hs256TokensFromTheSecretAreAcceptedWhateverTheirKid() async throws {
        let key = try await TestKey.hs256()
        let verifier = JWTVerifier(keys: try await JWTKeySet.hs256(secret: key.secret))
        let identity = accepted(try key.token(TestClaims.valid(["iss": "https://issuer.example"])), by: verifier)
        #expect(identity == Identity(subject: "alice", issuer: "https://issuer.example"))
        #expect(accepted(try key.named("any-kid").token(), by: verifier)?.subject == "alice", "a lone secret has no kid to match")
        let other = try await TestKey.hs256()
        expectRefusal(.badSignature, try other.token(), by: verifier)
    }

    @Test func rs256AndEs256KeysArePickedByKid() async throws {
        let directory = try TemporaryDirectory(prefix: "jwt")
        defer { directory.remove() }
        let rsa1 = try await TestKey.rs256(keyID: "rsa-1")
        let rsa2 = try await TestKey.rs256(keyID: "rsa-2")
        let ec1 = try await TestKey.es256(keyID: "ec-1")
        let ec2 = try await TestKey.es256(keyID: "ec-2")
        let verifier = try await jwksVerifier([rsa1, rsa2, ec1, ec2], in: directory)
        for (index, key) in [rsa1, rsa2, ec1, ec2].enumerated() {
            #expect(accepted(try key.token(TestClaims.valid(subject: "user-\(index)")), by: verifier)?.subject == "user-\(index)")
        }
        // The kid picks the key: another key of the same algorithm under its name does not verify.
        expectRefusal(.badSignature, try rsa2.named("rsa-1").token(), by: verifier)
        expectRefusal(.badSignature, try ec2.named("ec-1").token(), by: verifier)
        expectRefusal(.unknownKey, try rsa1.named("rsa-3").token(), by: verifier)
        // Without a kid, two keys fit each algorithm: none is guessed.
        expectRefusal(.unknownKey, try rsa1.named(nil).token(), by: verifier)
        expectRefusal(.unknownKey, try ec1.named(nil).token(), by: verifier)
    }

    @Test func aTokenWithoutKidNeedsExactlyOneKeyOfItsAlgorithm() async throws {
        let directory = try TemporaryDirectory(prefix: "jwt")
        defer { directory.remove() }
        let rsa = try await TestKey.rs256(keyID: "rsa")
        let ec = try await TestKey.es256(keyID: nil)
        let verifier = try await jwksVerifier([rsa, ec], in: directory)
        #expect(accepted(try rsa.named(nil).token(), by: verifier)?.subject == "alice")
        #expect(accepted(try ec.token(), by: verifier)?.subject == "alice")
        expectRefusal(.unknownKey, try ec.named("ec").token(), by: verifier)
    }

    @Test func noneAndAlgorithmsNoKeyIsForAreUnsupported() async throws {
        let directory = try TemporaryDirectory(prefix: "jwt")
        defer { directory.remove() }
        let rsa = try await TestKey.rs256(keyID: "rsa")
        let ec = try await TestKey.es256(keyID: "ec")
        let verifier = try await jwksVerifier([rsa, ec], in: directory)
        let valid = try rsa.token()
        let parts = valid.split(separator: ".").map(String.init)
        for none in ["none", "None", "NONE"] {
            let header = base64URL(try JSONCoding.encode(["alg": JSONValue.string(none), "kid": "rsa"] as JSONObject))
            expectRefusal(.unsupportedAlgorithm, header + "." + parts[1] + ".", by: verifier)
            expectRefusal(.unsupportedAlgorithm, header + "." + parts[1] + "." + parts[2], by: verifier)
        }
        // The classic confusion: an HMAC token keyed with the RSA public key's own text.
        let publicText = try JSONCoding.encode(rsa.publicJWK)
        for kid in ["rsa", nil] {
            let forged = try await TestKey.hmac(publicText, keyID: kid)
            expectRefusal(.unsupportedAlgorithm, try forged.token(), by: verifier)
        }
        // A kid that names a key of another algorithm.
        expectRefusal(.unsupportedAlgorithm, try ec.named("rsa").token(), by: verifier)
        for algorithm in ["RS384", "PS256", "ES384", "EdDSA", "HS512", ""] {
            expectRefusal(.unsupportedAlgorithm, try rsa.token { $0["alg"] = .string(algorithm) }, by: verifier)
        }
        // And an RSA or EC token against an HS256 secret.
        let secretVerifier = JWTVerifier(keys: try await JWTKeySet.hs256(secret: try await TestKey.hs256().secret))
        expectRefusal(.unsupportedAlgorithm, valid, by: secretVerifier)
        expectRefusal(.unsupportedAlgorithm, try ec.token(), by: secretVerifier)
    }

    @Test func forgedAndDamagedSignaturesAreBad() async throws {
        let directory = try TemporaryDirectory(prefix: "jwt")
        defer { directory.remove() }
        let rsa = try await TestKey.rs256(keyID: "rsa")
        let ec = try await TestKey.es256(keyID: "ec")
        let verifier = try await jwksVerifier([rsa, ec], in: directory)
        for key in [rsa, ec] {
            let parts = try key.token().split(separator: ".").map(String.init)
            // The claims changed under the original signature.
            let changed = base64URL(try JSONCoding.encode(TestClaims.valid(subject: "mallory")))
            expectRefusal(.badSignature, [parts[0], changed, parts[2]].joined(separator: "."), by: verifier)
            // The signature truncated, removed, or one bit flipped.
            let signature = try #require(Data(base64Encoded: padded(parts[2])))
            var flipped = signature
            flipped[flipped.count / 2] ^= 0x01
            for damaged in [signature.prefix(signature.count - 2), Data(), flipped] {
                expectRefusal(.badSignature, [parts[0], parts[1], base64URL(Data(damaged))].joined(separator: "."), by: verifier)
            }
        }
        // An attacker's key pair, under a known kid and with its public key embedded in the header.
        let attacker = try await TestKey.es256(keyID: "ec")
        expectRefusal(.badSignature, try attacker.token { $0["jwk"] = .object(attacker.publicJWK) }, by: verifier)
    }

    @Test func malformedTokensAreMalformed() async throws {
        let key = try await TestKey.hs256()
        let verifier = JWTVerifier(keys: try await JWTKeySet.hs256(secret: key.secret))
        let parts = try key.token().split(separator: ".").map(String.init)
        let notJSON = base64URL(Data("not json".utf8))
        for token in [
            "", "abc", "a.b", "a.b.c.d", parts[0] + "." + parts[1], "." + parts[1] + "." + parts[2], parts[0] + ".." + parts[2],
            parts[0] + "=." + parts[1] + "." + parts[2], parts[0] + "." + parts[1] + "." + parts[2] + "*",
            parts[0] + "." + parts[1] + " ." + parts[2], notJSON + "." + parts[1] + "." + parts[2],
            base64URL(Data("[1]".utf8)) + "." + parts[1] + "." + parts[2],
            try key.token(TestClaims.valid(["pad": .string(String(repeating: "x", count: 9000))])),
        ] {
            expectRefusal(.malformed, token, by: verifier)
        }
        // Well signed, but the header or the claims are not what a JWT must be.
        expectRefusal(.malformed, try key.token { $0["alg"] = 256 }, by: verifier)
        expectRefusal(.malformed, try key.token { $0["kid"] = 7 }, by: verifier)
        expectRefusal(.malformed, try key.token { $0["crit"] = ["exp"] }, by: verifier)
        expectRefusal(.malformed, try key.sign(header: key.header, payload: Data("not json".utf8)), by: verifier)
        expectRefusal(.malformed, try key.sign(header: key.header, payload: Data("[\"sub\"]".utf8)), by: verifier)
        expectRefusal(.malformed, try key.token(TestClaims.valid(["exp": nil])), by: verifier)
        expectRefusal(.malformed, try key.token(TestClaims.valid(["exp": "4102444800"])), by: verifier)
        expectRefusal(.malformed, try key.token(TestClaims.valid(["exp": .null])), by: verifier)
        expectRefusal(.malformed, try key.token(TestClaims.valid(["nbf": "0"])), by: verifier)
    }

    @Test func lifetimeIsCheckedWithTheClockSkew() async throws {
        let key = try await TestKey.hs256()
        let keys = try await JWTKeySet.hs256(secret: key.secret)
        let now = Date(timeIntervalSince1970: 1_750_000_000)
        let verifier = JWTVerifier(keys: keys, now: { now })
        let strict = JWTVerifier(keys: keys, clockSkew: 0, now: { now })
        let seconds = Int64(now.timeIntervalSince1970)
        func token(_ changes: [String: JSONValue?]) throws -> String { try key.token(TestClaims.valid(now: now, changes)) }

        #expect(verifier.clockSkew == 60)
        #expect(accepted(try token(["exp": .int(seconds + 1)]), by: strict) != nil)
        #expect(accepted(try token(["exp": .int(seconds - 59)]), by: verifier) != nil, "within the skew")
        #expect(accepted(try token(["exp": .double(Double(seconds) - 59.5)]), by: verifier) != nil, "a fractional NumericDate")
        expectRefusal(.expired, try token(["exp": .int(seconds - 60)]), by: verifier)
        expectRefusal(.expired, try token(["exp": .int(seconds - 3600)]), by: verifier)
        expectRefusal(.expired, try token(["exp": .int(seconds)]), by: strict)
        expectRefusal(.expired, try token(["exp": .int(seconds - 1)]), by: strict)

        #expect(accepted(try token(["nbf": .int(seconds)]), by: strict) != nil)
        #expect(accepted(try token(["nbf": .int(seconds + 60)]), by: verifier) != nil, "within the skew")
        expectRefusal(.notYetValid, try token(["nbf": .int(seconds + 61)]), by: verifier)
        expectRefusal(.notYetValid, try token(["nbf": .int(seconds + 1)]), by: strict)
    }

    @Test func issuerAndAudienceAreCheckedWhenConfigured() async throws {
        let directory = try TemporaryDirectory(prefix: "jwt")
        defer { directory.remove() }
        let key = try await TestKey.es256(keyID: "ec")
        let verifier = try await jwksVerifier([key], in: directory, issuer: "https://id.example", audience: "sync-api")
        let open = try await jwksVerifier([key], in: directory)
        func token(_ changes: [String: JSONValue?]) throws -> String {
            var claims: [String: JSONValue?] = ["iss": "https://id.example", "aud": "sync-api"]
            claims.merge(changes) { _, new in new }
            return try key.token(TestClaims.valid(claims))
        }
        #expect(accepted(try token([:]), by: verifier)?.issuer == "https://id.example")
        #expect(accepted(try token(["aud": ["other", "sync-api"]]), by: verifier) != nil, "an array audience")
        for issuer in ["https://id.example/", "https://ID.example", "", nil] as [JSONValue?] {
            expectRefusal(.wrongIssuer, try token(["iss": issuer]), by: verifier)
        }
        expectRefusal(.wrongIssuer, try token(["iss": ["https://id.example"]]), by: verifier)
        for audience in ["other", "Sync-API", ["other"], [], nil, 1] as [JSONValue?] {
            expectRefusal(.wrongAudience, try token(["aud": audience]), by: verifier)
        }
        #expect(accepted(try token(["iss": "elsewhere", "aud": "other"]), by: open)?.issuer == "elsewhere", "nothing required")
    }

    @Test func theSubjectMustBeUsable() async throws {
        let key = try await TestKey.hs256()
        let verifier = JWTVerifier(keys: try await JWTKeySet.hs256(secret: key.secret))
        let longest = String(repeating: "é", count: 255)
        #expect(accepted(try key.token(TestClaims.valid(subject: longest)), by: verifier)?.subject == longest)
        #expect(accepted(try key.token(TestClaims.valid(subject: "用户 42")), by: verifier)?.subject == "用户 42")
        let bad: [JSONValue?] = [
            nil, "", .string(String(repeating: "é", count: 256)), "a\nb", "bell\u{7}", "del\u{7F}", "c1\u{85}", 42, ["alice"], .null,
        ]
        for subject in bad {
            let claims = TestClaims.valid(["sub": subject])
            expectRefusal(.missingSubject, try key.token(claims), by: verifier, secrets: [subject?.stringValue ?? ""])
        }
    }

    @Test func everyClassHasItsOwnMessageAndNoneCarriesDetail() throws {
        let names = [
            "missingToken", "malformed", "unsupportedAlgorithm", "unknownKey", "badSignature", "expired", "notYetValid", "wrongIssuer",
            "wrongAudience", "missingSubject",
        ]
        #expect(AuthenticationFailure.allCases.map(\.name) == names)
        let messages = AuthenticationFailure.allCases.map(\.responseMessage)
        #expect(Set(messages).count == AuthenticationFailure.allCases.count)
        for failure in AuthenticationFailure.allCases {
            #expect(failure.responseMessage == "Unauthorized: \(failure.name)")
            #expect(failure.responseBody == ["error": .string("Unauthorized: \(failure.name)")])
            #expect(failure.description.hasPrefix("\(failure.name): "))
            #expect(failure.status == .unauthorized)
        }
        #expect(AuthenticationFailure.expired.description == "expired: the token's exp is past")
    }

    @Test func aFailureIsCaughtByItsClass() async throws {
        let key = try await TestKey.hs256()
        let verifier = JWTVerifier(keys: try await JWTKeySet.hs256(secret: key.secret))
        let expired = try key.token(TestClaims.valid(["exp": .int(Int64(Date().timeIntervalSince1970) - 3600)]))
        var caught: AuthenticationFailure?
        do {
            _ = try verifier.verify(expired)
        } catch AuthenticationFailure.notYetValid {
            caught = .notYetValid
        } catch AuthenticationFailure.expired {
            caught = .expired
        } catch {
            caught = nil
        }
        #expect(caught == .expired)
        #expect(caught != .notYetValid)
    }
}

/// Base64url text padded for Foundation's base64 decoder.
private func padded(_ text: String) -> String {
    let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    return standard + String(repeating: "=", count: (4 - standard.count % 4) % 4)
}
