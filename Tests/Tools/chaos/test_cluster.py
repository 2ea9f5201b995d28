"""The suite's PostgreSQL cluster keeps its port across a storage outage, or moves to a new one and
the run's servers follow it. scripts/chaos --backend postgres runs these before its campaign
(they need PostgreSQL: scripts/setup installs it)."""
import errno
import socket
import subprocess
import unittest

from actors import PostgresCluster
from run import Run


def answers(cluster):
    """Whether the cluster answers a query on its current port."""
    done = subprocess.run(cluster.as_user + [f"{cluster.bin}/psql", "-h", "127.0.0.1", "-p", str(cluster.port), "-U",
                                             "postgres", "-Atqc", "SELECT 1"], capture_output=True)
    return done.returncode == 0 and done.stdout.strip() == b"1"


class ClusterPortTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = PostgresCluster()

    @classmethod
    def tearDownClass(cls):
        cls.cluster.destroy()

    def test_no_one_else_can_take_the_port_during_an_outage(self):
        cluster = self.cluster
        port = cluster.port
        cluster.stop()
        self.assertFalse(answers(cluster))
        # A bind to that port without SO_REUSEADDR (as the port of another program) is refused.
        with socket.socket() as other, self.assertRaises(OSError) as refused:
            other.bind(("127.0.0.1", port))
        self.assertEqual(refused.exception.errno, errno.EADDRINUSE)
        # Nor does the kernel hand it out to a bind to port 0 (the way servers and proxies choose).
        chosen = []
        for _ in range(200):
            with socket.socket() as other:
                other.bind(("127.0.0.1", 0))
                chosen.append(other.getsockname()[1])
        self.assertNotIn(port, chosen)
        moves = cluster.moves
        cluster.start()
        self.assertEqual((cluster.port, cluster.moves), (port, moves))
        self.assertTrue(answers(cluster))

    def test_a_port_taken_all_the_same_moves_the_cluster(self):
        cluster = self.cluster
        port, moves = cluster.port, cluster.moves
        cluster.stop()
        # A process that binds the port explicitly with SO_REUSEADDR and listens can take it.
        thief = socket.socket()
        thief.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        thief.bind(("127.0.0.1", port))
        thief.listen()
        try:
            cluster.start()
            self.assertEqual(cluster.moves, moves + 1)
            self.assertNotEqual(cluster.port, port)
            self.assertIn(f":{cluster.port}/", cluster.url("chaos"))
            self.assertTrue(answers(cluster))
            cluster.create_database("chaos_moved")
        finally:
            thief.close()


class FakeServer:
    def __init__(self, alive):
        self.alive, self.kills, self.starts = alive, 0, 0

    def kill(self):
        self.alive, self.kills = False, self.kills + 1


class FakeCluster:
    def __init__(self, move):
        self.move, self.moves, self.running = move, 0, False

    def start(self):
        self.running = True
        self.moves += 1 if self.move else 0


class RunFollowsTheClusterTests(unittest.TestCase):
    def run_with(self, cluster, servers):
        run = Run.__new__(Run)
        run.cluster, run.servers, run.proxies, run.cluster_moves = cluster, servers, {}, 0
        run.restarted = []
        run.restart_server = lambda server: run.restarted.append(server)
        return run

    def test_servers_restart_when_the_cluster_moved(self):
        servers = {"s0": FakeServer(alive=True), "s1": FakeServer(alive=False)}
        run = self.run_with(FakeCluster(move=True), servers)
        run.start_cluster()
        self.assertEqual(run.cluster_moves, 1)
        self.assertEqual([server.kills for server in servers.values()], [1, 0])
        self.assertEqual(run.restarted, list(servers.values()))

    def test_servers_are_left_alone_when_the_cluster_kept_its_port(self):
        servers = {"s0": FakeServer(alive=True)}
        run = self.run_with(FakeCluster(move=False), servers)
        run.start_cluster()
        self.assertEqual((run.cluster_moves, servers["s0"].kills, run.restarted), (0, 0, []))


if __name__ == "__main__":
    unittest.main()
