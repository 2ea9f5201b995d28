import Foundation
public import SyncKeys
import Synchronization

/// Secrets passed through environment variables, moved out of the environment once and handed
/// out once.
///
/// A tool calls ``captureProcessEnvironment(_:)`` first thing in `main`, while the process has one
/// thread: each variable's value is copied into `SecretBytes`, overwritten in place (so
/// `/proc/<pid>/environ` and a core dump no longer show it) and its entry removed, so child
/// processes never inherit it. Later code asks ``take(_:)`` for a value, once; what was never
/// taken is wiped by ``discardAll()``.
///
/// The capture works on any environment block (``capture(_:from:)``), so it is tested on a block
/// the test makes, never by changing a test process's own environment (which other threads read
/// while they spawn processes).
public final class SecretEnvironment: Sendable {
    /// The store passphrase.
    public static let passphrase = "CIPHERSYNC_PASSPHRASE"
    /// A new passphrase (change-passphrase).
    public static let newPassphrase = "CIPHERSYNC_NEW_PASSPHRASE"
    /// Every variable the tools read secrets from.
    public static let names = [passphrase, newPassphrase]

    /// The secrets this process was started with (see ``captureProcessEnvironment(_:)``).
    public static let process = SecretEnvironment()

    private let values: Mutex<[String: SecretBytes]>

    /// An environment holding `values` (empty by default).
    ///
    /// - Parameter values: Secrets by variable name.
    public init(_ values: [String: SecretBytes] = [:]) {
        self.values = Mutex(values)
    }

    /// Moves the variables `names` out of this process's environment into ``process``.
    ///
    /// Call it first thing in `main`, before any other thread exists: the environment is changed
    /// in place, without the C library's lock.
    public static func captureProcessEnvironment(_ names: [String] = SecretEnvironment.names) {
        // `environ` is null only after `clearenv()`: then there is nothing to capture.
        let block: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
        guard let block else { return }
        process.capture(names, from: block)
    }

    /// Moves the variables `names` out of `block`, an environment block (`NAME=value` C strings
    /// ending with a null pointer, as `environ`): each value is copied into `SecretBytes`, its
    /// bytes in the block are overwritten with zeros, and its entry is removed from the block
    /// (the entries after it move up). A name that appears twice is captured once, its first
    /// value kept, and removed everywhere.
    ///
    /// - Parameters:
    ///   - names: The variables to capture.
    ///   - block: The environment block; changed in place.
    public func capture(_ names: [String], from block: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) {
        var index = 0
        while let entry = block[index] {
            guard let name = names.first(where: { Self.entry(entry, isNamed: $0) }) else {
                index += 1
                continue
            }
            let value = entry + name.utf8.count + 1
            let count = strlen(value)
            let secret = SecretBytes(count: count) { buffer in
                if let base = buffer.baseAddress { base.copyMemory(from: value, byteCount: count) }
            }
            memset(value, 0, count)
            values.withLock { captured in
                if captured[name] == nil { captured[name] = secret }
            }
            var next = index
            repeat {
                block[next] = block[next + 1]
                next += 1
            } while block[next - 1] != nil
        }
    }

    /// Whether the C string `entry` is `name=…` (it ends at its terminator, so no byte past it is read).
    private static func entry(_ entry: UnsafeMutablePointer<CChar>, isNamed name: String) -> Bool {
        var offset = 0
        for byte in name.utf8 {
            guard UInt8(bitPattern: entry[offset]) == byte else { return false }
            offset += 1
        }
        return entry[offset] == CChar(UInt8(ascii: "="))
    }

    /// The captured value of `name`, handed out once.
    ///
    /// - Parameter name: A variable name.
    /// - Returns: Its value, or `nil` when it was not set or was already taken.
    public func take(_ name: String) -> SecretBytes? {
        values.withLock { $0.removeValue(forKey: name) }
    }

    /// Drops every value not taken (each is wiped as it goes).
    public func discardAll() {
        values.withLock { $0.removeAll() }
    }
}
