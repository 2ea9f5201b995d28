public import ArgumentParser
import Foundation
public import SyncKeys

/// The `--profile` option for commands that create a key slot: `default` (scrypt N=2^17, r=8,
/// p=1) or `pbkdf2-sha512` (220,000 iterations). The weak `insecure-test` profile exists for
/// automated tests and is refused unless the environment variable
/// `CIPHERSYNC_ALLOW_INSECURE_PROFILE=1` is set, so nobody picks it by accident.
public struct KeyProfileOptions: ParsableArguments, Sendable {
    /// The environment variable that allows the insecure test profile.
    public static let insecureOptIn = "CIPHERSYNC_ALLOW_INSECURE_PROFILE"

    /// The profile's name as given on the command line.
    @Option(
        name: .customLong("profile"),
        help: ArgumentHelp(
            "Key-derivation profile: default (scrypt) or pbkdf2-sha512.", valueName: "name"))
    public var name: String = KeyProfile.default.name

    /// The options with their defaults (ArgumentParser fills them).
    public init() {}

    /// Refuses an unknown profile, and the insecure one without the opt-in.
    ///
    /// - Throws: `ValidationError` naming the fault.
    public func validate() throws {
        guard let profile = KeyProfile.named(name) else {
            throw ValidationError("Unknown profile '\(name)'; use default or pbkdf2-sha512.")
        }
        if profile == .insecureTest && !Self.allowsInsecureProfile {
            throw ValidationError("The insecure-test profile is for automated tests only (set \(Self.insecureOptIn)=1).")
        }
    }

    /// The chosen profile.
    public var profile: KeyProfile { KeyProfile.named(name) ?? .default }

    /// Whether the environment opts in to the insecure test profile (for creating and unlocking).
    public static var allowsInsecureProfile: Bool {
        ProcessInfo.processInfo.environment[insecureOptIn] == "1"
    }
}
