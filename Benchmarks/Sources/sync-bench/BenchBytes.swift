/// Random bytes and hexadecimal text for the workloads: keys and passphrases of a run, and the
/// SHA-256 digests an attachment row carries.
enum BenchBytes {
    /// `count` bytes from the system's cryptographically secure generator.
    static func random(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// `bytes` as lowercase hexadecimal digits, two per byte (`[0, 255]` is `"00ff"`).
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }
}
