public import Foundation

/// A software TPM 2.0 for one test: Debian's `swtpm` on a free loopback port with a fresh state
/// directory, reached with the TCTI configuration ``tcti``; stopped by its pid file (``stop()``),
/// and by a watchdog should the test process die first. `scripts/setup` installs swtpm and
/// tpm2-tools; without them ``start()`` throws saying so (no skipping).
///
/// `swtpm_setup` is not run: a TPM whose state directory is empty manufactures itself on its first
/// start (about 0.1 s instead of about 2 s); the endorsement-key certificates `swtpm_setup` adds
/// are not used by key slots.
public final class SoftwareTPM: Sendable {
    /// The state directory (the TPM's NV memory and its pid file).
    public let directory: URL
    /// The TPM command port (the control port is the next one).
    public let port: Int

    /// The TCTI configuration string of this TPM, for `--tcti` / `CIPHERSYNC_TCTI` / `TPM2TOOLS_TCTI`.
    public var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    private init(directory: URL, port: Int) {
        self.directory = directory
        self.port = port
    }

    /// Starts a new TPM with a fresh state.
    ///
    /// - Throws: ``SoftwareTPMError`` with swtpm's output when it cannot be started.
    public static func start() throws -> SoftwareTPM {
        let result = try runProgram("/bin/bash", ["-c", startScript, "start", "\(getpid())"])
        var values: [String: String] = [:]
        for line in result.output.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        guard result.status == 0, let directory = values["SWTPM_DIR"], let port = values["SWTPM_PORT"].flatMap({ Int($0) }) else {
            throw SoftwareTPMError(message: result.output + result.error)
        }
        return SoftwareTPM(directory: URL(fileURLWithPath: directory), port: port)
    }

    /// Stops the TPM (by the pid in its pid file) and removes its state directory.
    public func stop() {
        _ = try? runProgram("/bin/bash", ["-c", Self.stopScript, "stop", directory.path])
    }

    /// Runs a tpm2-tools program against this TPM (e.g. `tpm2_pcrextend`).
    ///
    /// - Parameters:
    ///   - tool: The program's name.
    ///   - arguments: Its arguments.
    /// - Returns: What it printed and its exit status.
    @discardableResult
    public func tool(_ tool: String, _ arguments: [String]) throws -> ProgramResult {
        var environment = ProcessInfo.processInfo.environment
        environment["TPM2TOOLS_TCTI"] = tcti
        return try runProgram("/usr/bin/\(tool)", arguments, environment: environment)
    }

    /// The persistent handles the TPM holds (`0x…`).
    public func persistentHandles() throws -> [String] {
        let result = try tool("tpm2_getcap", ["handles-persistent"])
        guard result.status == 0 else { throw SoftwareTPMError(message: result.error) }
        return result.output.split(separator: "\n").compactMap { line in
            line.hasPrefix("- 0x") ? String(line.dropFirst(2)).lowercased() : nil
        }
    }

    /// Flushes every transient object and session, as the kernel's resource manager does when a
    /// process that used `/dev/tpmrm0` dies: swtpm is reached without one, so what a killed tool
    /// had loaded stays loaded until this runs.
    public func flushTransients() throws {
        for flag in ["--transient-object", "--loaded-session", "--saved-session"] {
            let result = try tool("tpm2_flushcontext", [flag])
            guard result.status == 0 else { throw SoftwareTPMError(message: result.error) }
        }
    }

    private static let startScript = #"""
        set -uo pipefail
        PARENT=$1
        command -v swtpm >/dev/null || { echo "swtpm is not installed: run scripts/setup"; exit 1; }
        DIR=$(mktemp -d /tmp/ciphersync-swtpm-XXXXXX)
        for attempt in 1 2 3 4 5; do
            PORT=$(python3 -c 'import socket
        s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]
        t = socket.socket(); t.bind(("127.0.0.1", p + 1)); print(p)') || continue
            if swtpm socket --tpm2 --tpmstate dir="$DIR" --server type=tcp,port=$PORT,bindaddr=127.0.0.1 \
                --ctrl type=tcp,port=$((PORT + 1)),bindaddr=127.0.0.1 --flags startup-clear,not-need-init \
                --pid file="$DIR/pid" --daemon 2>"$DIR/swtpm.log"; then
                STARTED=1
                break
            fi
        done
        if [ -z "${STARTED:-}" ]; then cat "$DIR/swtpm.log"; rm -rf "$DIR"; exit 1; fi
        nohup bash -c '
            while kill -0 '"$PARENT"' 2>/dev/null && [ -f "'"$DIR"'/pid" ]; do sleep 1; done
            [ -f "'"$DIR"'/pid" ] && kill "$(cat "'"$DIR"'/pid")"
            rm -rf "'"$DIR"'"' >/dev/null 2>&1 </dev/null &
        echo "SWTPM_DIR=$DIR"
        echo "SWTPM_PORT=$PORT"
        """#

    private static let stopScript = #"""
        DIR=$1
        if [ -f "$DIR/pid" ]; then
            PID=$(cat "$DIR/pid")
            kill "$PID" 2>/dev/null
            tail --pid="$PID" -f /dev/null
        fi
        rm -rf "$DIR"
        """#
}

/// swtpm could not be started; the message is its output.
public struct SoftwareTPMError: Error, CustomStringConvertible {
    /// What swtpm (or tpm2-tools) printed.
    public let message: String
    /// The message.
    public var description: String { "software TPM: \(message)" }
}
