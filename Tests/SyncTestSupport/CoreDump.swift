public import Foundation

/// The memory of a stopped process, as a core dump written by gdb's `gcore`, to search it for
/// secrets.
public struct CoreDump: Sendable {
    /// The bytes of the core file.
    public let bytes: Data

    /// Where Debian's gdb installs `gcore` (`scripts/setup` installs gdb when it is missing).
    public static let gcore = "/usr/bin/gcore"

    /// Dumps the (stopped) process `pid` into a core file in `directory`, reads it and removes it.
    ///
    /// - Throws: When `gcore` fails or writes no core.
    public static func take(of pid: pid_t, in directory: URL) throws -> CoreDump {
        let prefix = directory.appendingPathComponent("core-\(UUID().uuidString)").path
        let path = "\(prefix).\(pid)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runProgram(
            gcore, ["-o", prefix, String(pid)], environment: ["PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"])
        guard result.status == 0, FileManager.default.fileExists(atPath: path) else {
            throw CoreDumpError(message: "gcore exited \(result.status): \(result.error.suffix(500))")
        }
        return CoreDump(bytes: try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// How many times `pattern` occurs in the dump (overlapping occurrences counted once each).
    public func occurrences(of pattern: [UInt8]) -> Int {
        guard !pattern.isEmpty else { return 0 }
        return bytes.withUnsafeBytes { memory in
            guard let base = memory.baseAddress else { return 0 }
            return pattern.withUnsafeBytes { needle in
                var count = 0
                var offset = 0
                // glibc's memmem does the search in C (a dump is hundreds of MB, mostly zeros).
                while memory.count - offset >= needle.count,
                    let found = Self.memmem(base + offset, memory.count - offset, needle.baseAddress, needle.count)
                {
                    count += 1
                    offset = base.distance(to: UnsafeRawPointer(found)) + 1
                }
                return count
            }
        }
    }

    /// glibc's `memmem`, which the Glibc module does not export (it is a GNU extension).
    private static let memmem: @convention(c) (UnsafeRawPointer?, Int, UnsafeRawPointer?, Int) -> UnsafeMutableRawPointer? = {
        // RTLD_DEFAULT is the null handle on glibc; memmem is always in libc.
        guard let symbol = dlsym(nil, "memmem") else { preconditionFailure("glibc has no memmem") }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeRawPointer?, Int, UnsafeRawPointer?, Int) -> UnsafeMutableRawPointer?).self)
    }()

    /// The forms a secret text can take in memory, by name: UTF-8 and UTF-16 (both byte orders),
    /// each in Unicode NFC and NFD.
    public static func forms(of text: String, named name: String) -> [(name: String, bytes: [UInt8])] {
        var forms: [(String, [UInt8])] = []
        for (form, normalized) in [("NFC", text.precomposedStringWithCanonicalMapping), ("NFD", text.decomposedStringWithCanonicalMapping)] {
            forms.append(("\(name) \(form) UTF-8", Array(normalized.utf8)))
            let units = Array(normalized.utf16)
            forms.append(("\(name) \(form) UTF-16LE", units.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }))
            forms.append(("\(name) \(form) UTF-16BE", units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }))
        }
        return forms
    }

    /// The forms a key can take in memory, by name: its bytes and their hex text in both cases.
    public static func forms(ofKey key: [UInt8], named name: String) -> [(name: String, bytes: [UInt8])] {
        let hex = key.map { String(format: "%02x", $0) }.joined()
        return [(name, key), ("\(name) hex", Array(hex.utf8)), ("\(name) HEX", Array(hex.uppercased().utf8))]
    }
}

/// `gcore` could not dump a process.
public struct CoreDumpError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
    public init(message: String) { self.message = message }
}
