"""A fault-injecting TCP proxy between one device and its server (loopback only).

Each connection is pumped by one thread with select(), which reads the proxy's current fault
before every chunk it moves. Faults act on the answers (server to device), so that a request has
reached the server when its answer is lost:

  partition  open connections are reset, new ones are refused (reset at once)
  drop       answers are read from the server and thrown away (the device times out)
  delay      every answer chunk waits PARAM seconds
  cut        the first answer chunk is forwarded in part, then the device's side is closed
  reset      at the first answer byte both sides are reset, nothing forwarded
"""
import select
import socket
import struct
import threading
import time

FAULT_KINDS = ("partition", "drop", "delay", "cut", "reset")


def _reset(sock):
    """Closes a socket with an RST (SO_LINGER 0)."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


class FaultProxy:
    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self._lock = threading.Lock()
        self._fault = None  # (kind, param)
        self._generation = 0  # bumped when a partition starts: older connections end
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(128)
        self.port = self._listener.getsockname()[1]
        self._closed = False
        self.counts = {kind: 0 for kind in FAULT_KINDS}  # chunks or connections affected
        threading.Thread(target=self._accept_loop, daemon=True).start()

    def set_fault(self, kind, param=0.0):
        with self._lock:
            self._fault = (kind, param)
            if kind == "partition":
                self._generation += 1

    def heal(self):
        with self._lock:
            self._fault = None

    def fault(self):
        with self._lock:
            return self._fault, self._generation

    def close(self):
        self._closed = True
        with self._lock:
            self._generation += 1
        _reset(self._listener)

    def _count(self, kind):
        with self._lock:
            self.counts[kind] += 1

    def _accept_loop(self):
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            fault, generation = self.fault()
            if fault and fault[0] == "partition":
                self._count("partition")
                _reset(client)
                continue
            threading.Thread(target=self._pump, args=(client, generation), daemon=True).start()

    def _hold(self, generation):
        """Waits while a drop lasts (and the proxy is not partitioned or closed)."""
        while not self._closed:
            fault, current = self.fault()
            if current != generation or not fault or fault[0] != "drop":
                return
            time.sleep(0.05)

    def _pump(self, client, generation):
        try:
            port = self.upstream_port
            if port is None:  # the server is down: its old port may belong to another process now
                raise ConnectionRefusedError
            upstream = socket.create_connection(("127.0.0.1", port), timeout=2)
        except OSError:
            _reset(client)
            return
        upstream.settimeout(None)
        graceful = False
        try:
            while not self._closed:
                readable, _, _ = select.select([client, upstream], [], [], 0.1)
                fault, current = self.fault()
                if current != generation or (fault and fault[0] == "partition"):
                    self._count("partition")
                    return
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        if sock is upstream and fault and fault[0] == "drop":
                            self._hold(generation)  # the answer stays lost: the device waits
                        return
                    if sock is client:
                        upstream.sendall(data)
                        continue
                    kind = fault[0] if fault else None
                    if kind == "drop":
                        self._count("drop")
                        continue
                    if kind == "reset":
                        self._count("reset")
                        return
                    if kind == "cut":
                        self._count("cut")
                        client.sendall(data[: max(1, len(data) // 2)])
                        graceful = True
                        return
                    if kind == "delay":
                        self._count("delay")
                        time.sleep(fault[1])
                    client.sendall(data)
        except OSError:
            pass
        finally:
            if graceful:
                try:
                    client.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                client.close()
            else:
                _reset(client)
            _reset(upstream)
