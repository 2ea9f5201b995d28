"""The processes of a chaos run: a private PostgreSQL cluster, sync-server instances, devices."""
import base64
import glob
import hashlib
import hmac
import json
import os
import queue
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time


def held_port():
    """A loopback port of the kernel's choosing, held by a socket bound to it that never listens.

    While it is bound, the kernel gives the port to no one else: neither to a bind to port 0 nor as
    the local port of an outgoing connection. A server that sets SO_REUSEADDR (PostgreSQL does)
    can still bind it and listen, as the holder does not listen. Returns (port, socket)."""
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    holder.bind(("127.0.0.1", 0))
    return holder.getsockname()[1], holder


def mint_token(secret, subject, lifetime=86400):
    """An HS256 sign-in token for sync-server --jwt-secret-file (as scripts/mint-token makes)."""
    b64 = lambda data: base64.urlsafe_b64encode(data).rstrip(b"=")
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = b64(json.dumps({"sub": subject, "exp": int(time.time()) + lifetime}).encode())
    signature = b64(hmac.new(secret, header + b"." + claims, hashlib.sha256).digest())
    return (header + b"." + claims + b"." + signature).decode()


class PostgresCluster:
    """A private cluster in a temporary directory (as the postgres user when run as root), one
    per campaign; each run gets a database of its own. stop() (immediate: a crash) and start()
    make a storage outage. synchronous_commit stays on: with it off, PostgreSQL acknowledges
    commits it has not written, and a crash loses them (the suite's first PostgreSQL run found
    that in its own setup). fsync is off: the machine itself never crashes here.

    The cluster's port is held for its whole life (`held_port`), so that a start after an outage
    finds it free; should the start fail all the same (a process that bound it explicitly), the
    cluster moves to a new held port and `moves` counts it: `url()` then names the new port, and
    the run restarts its servers on it."""

    def __init__(self):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
        if not bins:
            raise RuntimeError("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin): run scripts/setup")
        self.bin = bins[-1]
        self.dir = tempfile.mkdtemp(prefix="ciphersync-chaos-pg-")
        os.chmod(self.dir, 0o755)
        self.as_user = []
        if os.getuid() == 0:
            if subprocess.run(["id", "-u", "postgres"], capture_output=True).returncode != 0:
                subprocess.run(["useradd", "--system", "--no-create-home", "postgres"], check=True)
            shutil.chown(self.dir, "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        subprocess.run(
            self.as_user + [f"{self.bin}/initdb", "-D", f"{self.dir}/data", "-U", "postgres", "-A", "trust", "-E", "UTF8",
                            "--locale=C", "--no-sync"], check=True, capture_output=True)
        self.port, self.holder = held_port()
        self.moves = 0
        self.running = False
        self.start()
        # Should the campaign die without its finally blocks (kill -9), a watchdog stops the cluster.
        watchdog = (f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; "
                    f"{' '.join(self.as_user)} {self.bin}/pg_ctl -D {self.dir}/data -m immediate -w stop; rm -rf {self.dir}")
        # Started in the background of a shell that ends at once: nothing of ours waits for it.
        subprocess.run(["bash", "-c", f"({watchdog}) </dev/null >/dev/null 2>&1 &"], start_new_session=True, check=True)

    def start(self, attempts=3):
        """Starts the cluster on its port; when that fails (the port taken all the same), on a new
        held port, at most `attempts` times in all."""
        for attempt in range(1, attempts + 1):
            options = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=on "
                       "-c full_page_writes=off -c max_connections=300")
            done = subprocess.run(self.as_user + [f"{self.bin}/pg_ctl", "-D", f"{self.dir}/data", "-l",
                                                  f"{self.dir}/server.log", "-w", "-t", "30", "-o", options, "start"],
                                  capture_output=True)
            if done.returncode == 0:
                self.running = True
                return
            if attempt == attempts:
                raise RuntimeError(f"PostgreSQL did not start on port {self.port} (see {self.dir}/server.log): "
                                   + (done.stdout + done.stderr).decode(errors="replace")[-400:])
            # pg_ctl -w gave up, or the postmaster could not bind: make sure none is left, then move.
            self.stop()
            self.holder.close()
            self.port, self.holder = held_port()
            self.moves += 1

    def stop(self, mode="immediate"):
        subprocess.run(self.as_user + [f"{self.bin}/pg_ctl", "-D", f"{self.dir}/data", "-m", mode, "-w", "stop"],
                       capture_output=True)
        self.running = False

    def create_database(self, name):
        subprocess.run(self.as_user + [f"{self.bin}/psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                                       "-q", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)

    def drop_database(self, name):
        """Drops a run's database (a passing run's: each is several MiB, and a job makes hundreds)."""
        subprocess.run(self.as_user + [f"{self.bin}/psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                                       "-q", "-c", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], capture_output=True)

    def url(self, database):
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def destroy(self):
        if self.running:
            self.stop("fast")
        self.holder.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class ChildProcess:
    """An actor that runs one child process at a time in `self.process` (None when it has none)."""

    process = None

    @property
    def alive(self):
        process = self.process
        return process is not None and process.poll() is None

    def kill(self):
        # A local name: a restart thread may replace or clear self.process meanwhile.
        process = self.process
        if process is not None:
            process.kill()
            process.wait()
            if self.process is process:
                self.process = None


class ServerInstance(ChildProcess):
    """One sync-server process; each start takes a new port of the kernel's choosing (the port of a
    killed instance may be taken by another process meanwhile: another job's, another test's).
    `database` gives the database URL of each start (a PostgreSQL cluster may have moved), and
    `database_up` whether the database is there (a cluster not in a storage outage)."""

    def __init__(self, name, binary, database, secret_file, directory, database_up=lambda: True):
        self.name, self.binary, self.database, self.secret_file = name, binary, database, secret_file
        self.database_up = database_up
        self.log_path = os.path.join(directory, f"server-{name}.log")
        self.port = 0
        self.process = None
        self.starts = 0
        self.starting = threading.Lock()  # one start at a time (the schedule's restarts run on threads)

    def start(self):
        """Starts the instance. A start that met its database away does not listen until long after
        the database is back, so it is killed after 5 s and tried again, for about a minute; while the
        database is there, a start is given up to 60 s (a loaded machine). A start whose process is
        killed meanwhile (a kill-server of the schedule) gives up: its restart is the kill's."""
        with self.starting:
            if self.alive:
                return True
            return self._start()

    def _start(self):
        for _ in range(12):
            log = open(self.log_path, "ab")
            # A local name: a kill-server of the schedule may set self.process to None meanwhile.
            process = subprocess.Popen(
                [self.binary, "--host", "127.0.0.1", "--port", "0", "--database", self.database(),
                 "--jwt-secret-file", self.secret_file, "--per-user-tables", "all", "--log-level", "warning",
                 "--change-poll-interval", "100"],
                stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL)
            self.process = process
            log.close()
            line = self._first_line(process)
            if line.startswith("listening on "):
                self.port = int(line.strip().rsplit(":", 1)[1])
                self.starts += 1
                threading.Thread(target=process.stdout.read, daemon=True).start()
                return True
            process.kill()
            process.wait()
            if self.process is not process:
                return False  # killed meanwhile
            self.process = None
            time.sleep(0.25)  # the database is away
        return False

    def _first_line(self, process):
        """The process's first line of output, or "" when it exited, or met its database away and
        said nothing for 5 s, or said nothing for 60 s."""
        began = time.monotonic()
        database_was_up = self.database_up()
        while True:
            waited = time.monotonic() - began
            if waited > 60 or (waited > 5 and not database_was_up):
                return ""
            ready, _, _ = select.select([process.stdout], [], [], 0.5)
            if ready:
                return process.stdout.readline().decode()
            database_was_up = database_was_up and self.database_up()

    def stop(self):
        process = self.process
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.process = None


class DeviceProcess(ChildProcess):
    """One chaos-device process. Commands are written to its standard input at once; replies
    are read by a thread into a queue."""

    def __init__(self, name, binary, directory, server_url, policy, seed):
        self.name = name
        self.binary = binary
        self.directory = directory
        store_dir = os.path.join(directory, "store")
        os.makedirs(store_dir, mode=0o700, exist_ok=True)
        os.chmod(store_dir, 0o700)
        self.store = os.path.join(store_dir, "todos.db")
        self.history = os.path.join(directory, "history.jsonl")
        self.server_url = server_url
        self.policy = policy
        self.seed = seed
        self.process = None
        self.replies = queue.Queue()
        self.counter = 0
        self.starts = 0

    def start(self):
        environment = dict(os.environ, CHAOS_DEVICE=self.name, CHAOS_STORE=self.store, CHAOS_LOG=self.history,
                           CHAOS_SERVER=self.server_url, CHAOS_POLICY=self.policy, CHAOS_SEED=str(self.seed + self.starts))
        stderr = open(os.path.join(self.directory, "stderr.log"), "ab")
        self.process = subprocess.Popen([self.binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                        env=environment)
        stderr.close()
        self.starts += 1
        self.replies = queue.Queue()
        threading.Thread(target=self._read, args=(self.process, self.replies), daemon=True).start()

    @staticmethod
    def _read(process, replies):
        for line in process.stdout:
            try:
                replies.put(json.loads(line))
            except ValueError:
                pass
        replies.put(None)

    def send(self, command):
        """Sends a command; returns its number, or None when the device is down."""
        if not self.alive:
            return None
        self.counter += 1
        command = dict(command, n=self.counter)
        try:
            self.process.stdin.write((json.dumps(command) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        return self.counter

    def call(self, command, timeout):
        """Sends a command and waits for its reply (earlier replies are dropped); None on timeout."""
        number = self.send(command)
        if number is None:
            return None
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                reply = self.replies.get(timeout=remaining)
            except queue.Empty:
                return None
            if reply is None:
                return None
            if reply.get("n") == number:
                return reply

