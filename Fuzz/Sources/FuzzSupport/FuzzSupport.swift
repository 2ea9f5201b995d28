internal import CFuzzerDriver

/// What the fuzz targets share: reading libFuzzer's input, and the property checks that turn a
/// broken promise into a crash libFuzzer reports (and whose input it keeps).
public enum FuzzInput {
    /// The input bytes.
    ///
    /// - Parameters:
    ///   - data: libFuzzer's input.
    ///   - size: Its length.
    /// - Returns: A view of the bytes, valid for the call only.
    public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: data, count: size)
    }

    /// The input as text, ill-formed UTF-8 replaced by U+FFFD (as a server decodes a request).
    ///
    /// - Parameters:
    ///   - data: libFuzzer's input.
    ///   - size: Its length.
    /// - Returns: The text.
    public static func text(_ data: UnsafePointer<UInt8>?, _ size: Int) -> String {
        String(decoding: bytes(data, size), as: UTF8.self)
    }
}

/// Stops the process with `message` when `condition` does not hold: libFuzzer reports the trap
/// as a crash and writes the input that caused it.
///
/// - Parameters:
///   - condition: The property that must hold.
///   - message: What broke, with the values involved.
public func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant broken: \(message())") }
}

/// Runs libFuzzer: the body of a fuzz target's entry point.
///
/// SwiftPM links an executable's `main` to `<module>_main` (so tests can link executables);
/// each target defines that symbol and calls this, which hands the command line to libFuzzer's
/// driver with the target's test function.
public enum FuzzDriver {
    /// Runs libFuzzer's driver on the command line.
    ///
    /// - Parameters:
    ///   - argc: The argument count `main` received.
    ///   - argv: The arguments `main` received.
    ///   - test: The function run on each input (`LLVMFuzzerTestOneInput`).
    /// - Returns: The process's exit status.
    public static func run(
        _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
        _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt {
        var argc = argc
        var argv = argv
        return LLVMFuzzerRunDriver(&argc, &argv, test)
    }
}
