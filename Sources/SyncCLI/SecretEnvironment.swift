public import Foundation
public import Synchronization
public import SyncKeys

/// Secrets passed through environment variables, taken out of the environment at start-up.
///
/// ``captureAndClear(_:)`` copies each variable's bytes into `SecretBytes`, overwrites the
/// value in place (so `/proc/<pid>/environ` no longer shows it) and removes the variable, before
/// anything else runs; later code asks ``take(_:)`` for the value, once. Child processes never
/// inherit the variables.
public enum SecretEnvironment {
    /// The store passphrase.
    public static let passphrase = "CIPHERSYNC_PASSPHRASE"
    /// A new passphrase (change-passphrase).
    public static let newPassphrase = "CIPHERSYNC_NEW_PASSPHRASE"

    private static let captured = Mutex<[String: SecretBytes]>([:])

    /// Reads, wipes and removes the variables `names` from the environment of this process.
    /// Call first thing in `main`.
    public static func captureAndClear(_ names: [String] = [passphrase, newPassphrase]) {
        for name in names {
            guard let value = getenv(name) else { continue }
            let count = strlen(value)
            let secret = SecretBytes(count: count) { buffer in
                if let base = buffer.baseAddress { base.copyMemory(from: value, byteCount: count) }
            }
            // glibc's environment strings are writable; zeroing them clears /proc/<pid>/environ.
            memset(value, 0, count)
            unsetenv(name)
            captured.withLock { $0[name] = secret }
        }
    }

    /// The captured value of `name`, handed out once.
    public static func take(_ name: String) -> SecretBytes? {
        captured.withLock { $0.removeValue(forKey: name) }
    }
}
