import Foundation
import Synchronization

/// A PostgreSQL server for tests and benchmarks: `CIPHERSYNC_PGTEST_URL` when it is set (a
/// server someone runs, `postgres://USER@HOST:PORT/DB`, trust or `PGPASSWORD`), else a private
/// cluster this process starts on first use — `initdb` in a temporary directory (as the
/// `postgres` user when the process runs as root, since PostgreSQL refuses root), a free
/// loopback port, `fsync=off` — and stops and removes when the process ends (at exit, and by a
/// watchdog process should this one die without exiting).
///
/// There is no skipping: without PostgreSQL, ``shared()`` throws ``PostgresClusterError`` saying
/// what is missing, and the tests that need it fail with that message.
public struct PostgresCluster: Sendable {
    /// The host to connect to.
    public let host: String
    /// The port.
    public let port: Int
    /// The role to connect as (a superuser in a private cluster).
    public let user: String
    /// A database that exists (the maintenance database).
    public let database: String
    /// The directory of a cluster this process started, `nil` for a server named by
    /// ``urlVariable``.
    private(set) var directory: String?

    /// `postgres://user@host:port/database`: a URL for ``database`` or another database.
    ///
    /// - Parameter name: A database name, or `nil` for ``database``.
    /// - Returns: The URL (no password in it).
    public func url(database name: String? = nil) -> String {
        "postgres://\(user)@\(host):\(port)/\(name ?? database)"
    }

    /// The environment variable naming a server to use instead of a private cluster.
    public static let urlVariable = "CIPHERSYNC_PGTEST_URL"

    private static let state = Mutex<Result<PostgresCluster, PostgresClusterError>?>(nil)

    /// The cluster of this process, started on the first call.
    ///
    /// - Returns: The cluster.
    /// - Throws: ``PostgresClusterError`` when no PostgreSQL can be started or the URL is wrong.
    public static func shared() throws(PostgresClusterError) -> PostgresCluster {
        let result = state.withLock { state in
            if let state { return state }
            let started = Result<PostgresCluster, PostgresClusterError> { () throws(PostgresClusterError) -> PostgresCluster in try start() }
            state = started
            return started
        }
        return try result.get()
    }

    private static func start() throws(PostgresClusterError) -> PostgresCluster {
        if let text = ProcessInfo.processInfo.environment[urlVariable], !text.isEmpty {
            guard let url = URLComponents(string: text), url.scheme == "postgres" || url.scheme == "postgresql",
                let host = url.host, let user = url.user, url.password == nil
            else { throw .badURL(variable: urlVariable) }
            let database = url.path.count > 1 ? String(url.path.dropFirst()) : user
            return PostgresCluster(host: host, port: url.port ?? 5432, user: user, database: database)
        }
        return try startCluster(output: try run(startScript, environment: ["CIPHERSYNC_PARENT_PID": "\(getpid())"]))
    }

    /// The cluster a start script announced, registered to be stopped at exit.
    private static func startCluster(output: String) throws(PostgresClusterError) -> PostgresCluster {
        var values: [String: String] = [:]
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        guard let directory = values["PGTEST_DIR"], let portText = values["PGTEST_PORT"], let port = Int(portText) else {
            throw .didNotStart(output)
        }
        let first = startedDirectories.withLock { directories in
            directories.append(directory)
            return directories.count == 1
        }
        if first { atexit { PostgresCluster.stopStarted() } }
        return PostgresCluster(host: "127.0.0.1", port: port, user: "postgres", database: "postgres", directory: directory)
    }

    /// A cluster of the caller's own, apart from ``shared()``: a test that stops and starts its
    /// server (``stop()``, ``restart()``) disturbs no other test. Stopped and removed at exit.
    /// Without PostgreSQL installed it throws, as ``shared()`` does; with ``urlVariable`` set
    /// it still starts a private cluster (a server someone runs cannot be stopped).
    ///
    /// - Returns: The cluster, running.
    /// - Throws: ``PostgresClusterError`` when it cannot be started.
    public static func privateCluster() throws(PostgresClusterError) -> PostgresCluster {
        try startCluster(output: try run(startScript, environment: ["CIPHERSYNC_PARENT_PID": "\(getpid())"]))
    }

    /// Stops the server at once (`pg_ctl stop -m fast`: sessions are ended, connections
    /// refused) and returns once it is down. For a cluster of ``privateCluster()`` only.
    ///
    /// - Throws: ``PostgresClusterError/notPrivate`` for another server; the script's output
    ///   when it fails.
    public func stop() throws(PostgresClusterError) {
        guard let directory else { throw .notPrivate }
        _ = try Self.run(Self.controlScript, environment: ["PGTEST_DIR": directory, "PGTEST_ACTION": "stop", "PGTEST_PORT": "\(port)"])
    }

    /// Starts the stopped server again on its port and returns once it accepts connections.
    ///
    /// - Throws: ``PostgresClusterError/notPrivate`` for another server; the script's output
    ///   when it fails.
    public func restart() throws(PostgresClusterError) {
        guard let directory else { throw .notPrivate }
        _ = try Self.run(Self.controlScript, environment: ["PGTEST_DIR": directory, "PGTEST_ACTION": "start", "PGTEST_PORT": "\(port)"])
    }

    /// The directories of the clusters this process started, stopped at exit.
    private static let startedDirectories = Mutex<[String]>([])

    /// Stops the clusters this process started (at exit).
    private static func stopStarted() {
        let directories = startedDirectories.withLock { directories in
            defer { directories = [] }
            return directories
        }
        for directory in directories {
            _ = try? run(stopScript, environment: ["PGTEST_DIR": directory])
        }
    }

    /// Runs a bash script, returning its standard output; a failure carries its output.
    private static func run(_ script: String, environment: [String: String]) throws(PostgresClusterError) -> String {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do {
            try process.run()
        } catch {
            throw .didNotStart("cannot run /bin/bash: \(error)")
        }
        // This process's copy of the write end, closed so that reading ends with the script.
        try? output.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        // The script is reaped here (Process's own wait never returned when called from a test).
        var status: Int32 = 0
        while waitpid(process.processIdentifier, &status, 0) == -1, errno == EINTR {}
        let text = String(decoding: data, as: UTF8.self)
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else { throw .didNotStart(text) }
        return text
    }

    /// Starts a cluster; prints `PGTEST_DIR=…` and `PGTEST_PORT=…`. A watchdog (its output
    /// detached) stops the cluster and removes its directory once the parent process is gone.
    private static let startScript = #"""
        set -euo pipefail
        PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
        if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ]; then
            echo "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): run scripts/setup, or set CIPHERSYNC_PGTEST_URL"
            exit 1
        fi
        DIR=$(mktemp -d /tmp/ciphersync-pg-XXXXXX)
        chmod 0755 "$DIR"
        AS=()
        if [ "$(id -u)" = 0 ]; then
            id -u postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
            chown postgres "$DIR"
            AS=(runuser -u postgres --)
        fi
        "${AS[@]}" "$PGBIN/initdb" -D "$DIR/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$DIR/initdb.log" 2>&1 \
            || { cat "$DIR/initdb.log"; rm -rf "$DIR"; exit 1; }
        for attempt in 1 2 3; do
            PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
            if "${AS[@]}" "$PGBIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 30 -o "-p $PORT -k $DIR \
                -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
                -c max_connections=500" start >/dev/null; then
                break
            fi
            [ "$attempt" = 3 ] && { cat "$DIR/server.log"; rm -rf "$DIR"; exit 1; }
        done
        PARENT=$CIPHERSYNC_PARENT_PID
        nohup bash -c '
            while kill -0 '"$PARENT"' 2>/dev/null; do sleep 1; done
            if [ -f "'"$DIR"'/data/postmaster.pid" ]; then
                '"${AS[*]}"' "'"$PGBIN"'/pg_ctl" -D "'"$DIR"'/data" -m immediate -w stop
            fi
            rm -rf "'"$DIR"'"' >/dev/null 2>&1 </dev/null &
        echo "PGTEST_DIR=$DIR"
        echo "PGTEST_PORT=$PORT"
        """#

    /// Stops (`PGTEST_ACTION=stop`, fast: sessions ended) or starts again (`start`, on
    /// `PGTEST_PORT`, the options of ``startScript``) the cluster in `PGTEST_DIR`, waiting until
    /// it is down or accepts connections.
    private static let controlScript = #"""
        set -euo pipefail
        PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
        AS=(); [ "$(id -u)" = 0 ] && AS=(runuser -u postgres --)
        if [ "$PGTEST_ACTION" = stop ]; then
            "${AS[@]}" "$PGBIN/pg_ctl" -D "$PGTEST_DIR/data" -m fast -w -t 30 stop </dev/null >/dev/null
        else
            "${AS[@]}" "$PGBIN/pg_ctl" -D "$PGTEST_DIR/data" -l "$PGTEST_DIR/server.log" -w -t 30 -o "-p $PGTEST_PORT -k $PGTEST_DIR \
                -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
                -c max_connections=500" start </dev/null >/dev/null 2>&1 || { tail -20 "$PGTEST_DIR/server.log"; exit 1; }
        fi
        """#

    /// Stops the cluster in `PGTEST_DIR` and removes the directory once its postmaster is gone
    /// (after `pg_ctl stop` the postmaster may linger a moment as a zombie: its state is checked).
    private static let stopScript = #"""
        set -uo pipefail
        PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
        AS=(); [ "$(id -u)" = 0 ] && AS=(runuser -u postgres --)
        if [ -f "$PGTEST_DIR/data/postmaster.pid" ]; then
            PID=$(head -1 "$PGTEST_DIR/data/postmaster.pid")
            "${AS[@]}" "$PGBIN/pg_ctl" -D "$PGTEST_DIR/data" -m fast -w stop >/dev/null 2>&1
            for _ in $(seq 100); do
                STATE=$(ps -o stat= -p "$PID" 2>/dev/null || true)
                case "$STATE" in ""|Z*) break ;; esac
                sleep 0.05
            done
        fi
        rm -rf "$PGTEST_DIR"
        """#
}

/// Why no PostgreSQL is available to the tests.
public enum PostgresClusterError: Error, Sendable, CustomStringConvertible {
    /// The private cluster did not start: the output of the attempt.
    case didNotStart(String)
    /// The URL in the environment variable is not `postgres://USER@HOST[:PORT][/DB]`.
    case badURL(variable: String)
    /// Only a cluster of ``PostgresCluster/privateCluster()`` can be stopped and started.
    case notPrivate

    /// What is wrong and what to do.
    public var description: String {
        switch self {
        case .didNotStart(let output):
            return "PostgreSQL tests need a server: a private cluster could not be started (\(output.suffix(2000)))"
        case .badURL(let variable):
            return "\(variable) must be postgres://USER@HOST[:PORT][/DB] without a password (use PGPASSWORD)"
        case .notPrivate:
            return "Only a private cluster (PostgresCluster.privateCluster()) can be stopped and started by a test"
        }
    }
}
