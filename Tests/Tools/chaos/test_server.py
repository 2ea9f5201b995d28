"""A server start that a kill of the schedule meets gives up instead of starting another process
beside the kill's own restart (a PostgreSQL campaign left such a sync-server running)."""
import os
import stat
import tempfile
import threading
import unittest

from actors import ServerInstance

# Says it listens after 1 s, then waits, as sync-server does.
SLOW_SERVER = "#!/bin/sh\nsleep 1\necho 'listening on http://127.0.0.1:1'\nexec sleep 60\n"


class ServerStartTests(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        binary = os.path.join(self.directory.name, "slow-server")
        with open(binary, "w") as file:
            file.write(SLOW_SERVER)
        os.chmod(binary, stat.S_IRWXU)
        self.server = ServerInstance("s0", binary, lambda: "sqlite:x", "/dev/null", self.directory.name)

    def tearDown(self):
        self.server.kill()
        self.directory.cleanup()

    def test_a_start_killed_before_it_listens_gives_up(self):
        outcome = []
        starting = threading.Thread(target=lambda: outcome.append(self.server.start()))
        starting.start()
        while self.server.process is None:
            pass
        self.server.kill()
        starting.join()
        self.assertEqual(outcome, [False])
        self.assertIsNone(self.server.process)
        self.assertEqual(self.server.starts, 0)

    def test_a_second_start_waits_for_the_first_and_starts_nothing_more(self):
        outcomes = []
        threads = [threading.Thread(target=lambda: outcomes.append(self.server.start())) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(outcomes, [True, True])
        self.assertEqual((self.server.starts, self.server.alive), (1, True))


if __name__ == "__main__":
    unittest.main()
