#!/usr/bin/env python3
"""The chaos suite of CipherSync: devices, servers and a fault-injecting proxy per device on
loopback, a seeded schedule of operations and faults, and a checker (see docs/chaos.md).

The campaign around the runs (options, seeds, parallel jobs, the totals) is campaign.py.
"""
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from actors import DeviceProcess, ServerInstance, mint_token  # noqa: E402
from check import check, read_history  # noqa: E402
from disk import DeviceDisk, mounting_possible  # noqa: E402
from proxy import FAULT_KINDS, FaultProxy  # noqa: E402
from schedule import device_instance, device_user, make_schedule  # noqa: E402

SETTLE_ROUNDS = 6
SETTLE_TIMEOUT = 120


class Run:
    def __init__(self, seed, shape, binaries, directory, cluster):
        self.seed, self.shape, self.binaries, self.directory, self.cluster = seed, shape, binaries, directory, cluster
        self.policies, self.events = make_schedule(seed, shape)
        self.faults = Counter()
        self.phases = {}  # phase -> wall-clock seconds (start, play, settle, verify, stop)
        self.skipped = 0
        self.cluster_moves = 0  # starts of the PostgreSQL cluster on a new port (its own was taken)
        self.secret = os.urandom(32).hex().encode()
        secret_file = os.path.join(directory, "jwt-secret")
        with open(secret_file, "wb") as file:
            file.write(self.secret + b"\n")
        os.chmod(secret_file, 0o600)
        self.database_name = None  # the run's PostgreSQL database
        if shape.postgres:
            name = self.database_name = f"chaos_{seed}_{int(time.time() * 1000) % 10**9}"
            cluster.create_database(name)
            database = lambda: cluster.url(self.database_name)  # noqa: E731
        else:
            path = os.path.join(directory, "server.db")
            database = lambda: "sqlite:" + path  # noqa: E731
        up = (lambda: cluster.running) if shape.postgres else (lambda: True)
        self.servers = {f"s{i}": ServerInstance(f"s{i}", binaries["sync-server"], database, secret_file, directory, up)
                        for i in range(shape.instances)}
        self.devices, self.proxies, self.users, self.passphrases, self.tokens = {}, {}, {}, {}, {}
        self.instance_of = {}  # device -> the name of its server instance
        self.disks = {}  # device -> DeviceDisk (a tmpfs for its store), when the suite can mount
        self.disk_windows = {}  # device -> [[start, end]] (wall-clock seconds) of its full disk
        for index in range(shape.devices):
            name = f"d{index}"
            self.users[name] = device_user(shape, index)
            self.passphrases[name] = [f"chaos-{seed}-{name}-0"]

    # MARK: lifecycle

    def start(self):
        for server in self.servers.values():
            if not server.start():
                raise RuntimeError(f"sync-server {server.name} did not start (see {server.log_path})")
        for index, (name, user) in enumerate(self.users.items()):
            server = self.servers[device_instance(self.shape, index)]
            self.instance_of[name] = server.name
            proxy = FaultProxy(server.port)
            self.proxies[name] = proxy
            self.tokens[name] = mint_token(self.secret, user)
            directory = os.path.join(self.directory, name)
            os.makedirs(directory, exist_ok=True)
            if mounting_possible():
                disk = DeviceDisk(os.path.join(directory, "store"))
                disk.mount()
                self.disks[name] = disk
            self.disk_windows[name] = []
            self.devices[name] = DeviceProcess(
                name, self.binaries["chaos-device"], directory, f"http://127.0.0.1:{proxy.port}", self.policies[name],
                self.seed * 100 + index)
            self.start_device(name)

    def start_device(self, name):
        device = self.devices[name]
        device.start()
        device.send({"op": "open", "token": self.tokens[name], "passphrases": list(reversed(self.passphrases[name]))})

    def stop_all(self):
        for device in self.devices.values():
            device.kill()
        for proxy in self.proxies.values():
            proxy.close()
        for server in self.servers.values():
            server.stop()

    def unmount_all(self):
        for disk in self.disks.values():
            disk.unmount()

    # MARK: the schedule

    def play(self):
        """Plays the schedule until its end (`seconds`); the restarts and heals still due then are
        done at once (a storage outage's end before the restarts that wait for it)."""
        begin = time.monotonic()
        timers = []  # (time, action) for restarts and heals
        workers = []  # restarts run on threads of their own: a server waits for its database
        for event in self.events + [None]:
            at = self.shape.seconds if event is None else event.t
            while True:
                now = time.monotonic() - begin
                due = [timer for timer in timers if timer[0] <= now]
                for timer in due:
                    timers.remove(timer)
                    workers.append(threading.Thread(target=timer[1]))
                    workers[-1].start()
                if now >= at:
                    break
                time.sleep(min(0.02, at - now))
            if event is not None:
                self.dispatch(event, begin, timers)
        for _, action in sorted(timers, key=lambda timer: (timer[1] != self.start_cluster, timer[0])):
            action()
        for worker in workers:
            worker.join()

    def dispatch(self, event, begin, timers):
        later = lambda seconds, action: timers.append((time.monotonic() - begin + seconds, action))
        if event.kind == "cmd":
            command = dict(event.args)
            if command["op"] == "passphrase":
                new = f"chaos-{self.seed}-{event.target}-{len(self.passphrases[event.target])}"
                self.passphrases[event.target].append(new)
                command["new"] = new
            if self.devices[event.target].send(command) is None:
                self.skipped += 1
            return
        self.faults["offline-burst" if event.args.get("burst") else event.kind] += 1
        if event.kind == "kill-device":
            device = self.devices[event.target]
            if device.alive:
                device.kill()
                later(event.args["down"], lambda: self.start_device(event.target))
        elif event.kind == "kill-server":
            server = self.servers[event.target]
            if server.alive:
                server.kill()
                self.point_proxies(server)
                later(event.args["down"], lambda: self.restart_server(server))
        elif event.kind == "storage-outage":
            if self.cluster.running:
                self.cluster.stop()
                later(event.args["seconds"], self.start_cluster)
        elif event.kind == "disk-full":
            disk = self.disks.get(event.target)
            if disk is None:
                self.faults["disk-full (not run: mounting needs root)"] += 1
            elif not disk.full:
                window = [time.time(), None]
                window.append(disk.fill(event.args.get("leave", 0)))
                self.disk_windows[event.target].append(window)
                later(event.args["seconds"], lambda: self.free_disk(event.target))
        elif event.kind in FAULT_KINDS:
            proxy = self.proxies[event.target]
            proxy.set_fault(event.kind, event.args.get("delay", 0.0))
            later(event.args["seconds"], proxy.heal)

    def start_cluster(self):
        """Ends a storage outage. Should the cluster have moved to another port, the servers are
        restarted on it (their database URL names the port)."""
        moves = self.cluster.moves
        self.cluster.start()
        if self.cluster.moves != moves:
            self.cluster_moves += self.cluster.moves - moves
            for server in self.servers.values():
                if server.alive:
                    server.kill()
                    self.point_proxies(server)
                self.restart_server(server)

    def restart_server(self, server):
        server.start()
        self.point_proxies(server)

    def point_proxies(self, server):
        """Points the proxies of the server's devices at its current port, or at nothing while it
        is down (its old port may be another process's by then)."""
        for name, proxy in self.proxies.items():
            if self.instance_of[name] == server.name:
                proxy.upstream_port = server.port if server.alive else None

    def free_disk(self, name):
        disk = self.disks[name]
        if disk.full:
            disk.free()
            self.disk_windows[name][-1][1] = time.time()

    # MARK: settling and checking

    def heal(self):
        for name in self.disks:
            self.free_disk(name)
        if self.cluster is not None and not self.cluster.running:
            self.start_cluster()
        for server in self.servers.values():
            if not server.alive:
                self.restart_server(server)
        for proxy in self.proxies.values():
            proxy.heal()
        for name, device in self.devices.items():
            if not device.alive:
                self.start_device(name)

    def server_rows(self, user):
        server = next(iter(self.servers.values()))
        request = urllib.request.Request(
            f"http://127.0.0.1:{server.port}/tables/todos?__includeDeleted=true&$top=1000",
            headers={"ZUMO-API-VERSION": "2.0.0", "X-ZUMO-AUTH": mint_token(self.secret, user)})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                body = json.loads(answer.read())
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return []  # the table was never written
            raise RuntimeError(f"the server answered {user}'s read of its rows {error.code}: "
                               f"{error.read().decode(errors='replace')[:300]}") from error
        return body if isinstance(body, list) else body.get("results", body.get("items", []))

    def settle(self):
        """Syncs every device until each holds its user's server rows and nothing is pending."""
        finals = {}
        for round_number in range(1, SETTLE_ROUNDS + 1):
            finals = {}
            for name, device in self.devices.items():
                finals[name] = device.call({"op": "settle"}, SETTLE_TIMEOUT)
            rows = {user: self.server_rows(user) for user in set(self.users.values())}
            quiet = True
            for name, final in finals.items():
                if not final or not final.get("ok") or final.get("pending") or final.get("errors"):
                    quiet = False
                    continue
                local = sorted((r.get("id"), r.get("version"), r.get("text")) for r in final.get("rows", []))
                remote = sorted((r.get("id"), r.get("version"), r.get("text")) for r in rows[self.users[name]]
                                if not r.get("deleted"))
                quiet = quiet and local == remote
            if quiet:
                return finals, rows, round_number
        return finals, rows, SETTLE_ROUNDS

    def verify(self):
        """Closes each device's store and runs `sync-keys verify` on it, every device at once."""
        with ThreadPoolExecutor(max_workers=len(self.devices)) as pool:
            return dict(zip(self.devices, pool.map(self.verify_device, self.devices)))

    def verify_device(self, name):
        device = self.devices[name]
        device.call({"op": "close"}, 30)
        device.kill()
        binary = self.binaries.get("sync-keys")
        if not binary:
            return False, "no sync-keys binary"
        environment = dict(os.environ, CIPHERSYNC_ALLOW_INSECURE_PROFILE="1")
        # A passphrase change that the device never reached leaves an earlier one: the newest first.
        failures = []
        for number, passphrase in reversed(list(enumerate(self.passphrases[name]))):
            done = subprocess.run([binary, "verify", "--store", device.store, "--passphrase-fd", "0", "--json"],
                                  input=(passphrase + "\n").encode(), capture_output=True, env=environment)
            passed, text = verdict(done)
            if passed:
                return passed, text
            failures.append(f"passphrase {number}: {text.strip()}")
        return False, "; ".join(failures)

    def execute(self):
        clock = time.monotonic()

        def lap(phase):
            nonlocal clock
            now = time.monotonic()
            self.phases[phase] = round(now - clock, 2)
            clock = now

        try:
            self.start()
            lap("start")
            self.play()
            lap("play")
            self.heal()
            finals, rows, rounds = self.settle()
            lap("settle")
            verifications = self.verify()
            lap("verify")
        finally:
            self.stop_all()
            self.unmount_all()
            lap("stop")
        histories = {name: read_history(device.history) for name, device in self.devices.items()}
        windows = {name: [(start, end) for start, end, _ in spans] for name, spans in self.disk_windows.items()}
        divergences, stats = check(list(self.devices), self.users, histories, rows, finals, verifications, windows)
        stats["settle rounds"] = rounds
        stats["commands skipped (device down)"] = self.skipped
        if self.cluster is not None:
            stats["storage restarts on a new port"] = self.cluster_moves
        for proxy in self.proxies.values():
            for kind, count in proxy.counts.items():
                stats[f"proxy {kind} hits"] = stats.get(f"proxy {kind} hits", 0) + count
        return divergences, stats


def verdict(done):
    """Whether `sync-keys verify --json` passed every check but the key-derivation floor (the
    devices use the cheap test profile, which is below it by design); and a short text."""
    try:
        report = json.loads(done.stdout)
    except ValueError:
        return False, (done.stdout + done.stderr).decode(errors="replace")[-600:]
    failed = [check for check in report.get("checks", []) if not check.get("passed") and check.get("name") != "kdf-floor"]
    return not failed, "; ".join(f"{check.get('name')}: {check.get('detail')}" for check in failed)


def build_binaries(no_build, release=False):
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    configuration = ["-c", "release"] if release else []
    if not no_build:
        for product in ("sync-server", "chaos-device", "sync-keys"):
            subprocess.run(["swift", "build", *configuration, "--product", product], cwd=root, check=True,
                           stdin=subprocess.DEVNULL)
    # SwiftPM's link to the configuration's products: no `swift build` (and its lock) for --no-build.
    bin_path = os.path.join(root, ".build", "release" if release else "debug")
    binaries = {name: os.path.join(bin_path, name) for name in ("sync-server", "chaos-device", "sync-keys")}
    for name, path in binaries.items():
        if not os.access(path, os.X_OK):
            sys.exit(f"chaos: {path} is missing: run swift build {' '.join(configuration)} --product {name}".replace("  ", " "))
    return binaries


if __name__ == "__main__":
    from campaign import main
    main(sys.argv[1:])
