"""The full disk of a chaos device: a tmpfs that fill() leaves (nearly) without space, free()
empties again, and unmount() removes while keeping the store's files; and the schedule draws the
fault from a stream of its own. scripts/chaos runs these before every campaign."""
import errno
import os
import shutil
import tempfile
import unittest

from disk import DeviceDisk, mounting_possible, mounts_under
from schedule import Shape, make_schedule


@unittest.skipUnless(mounting_possible(), "mounting a tmpfs needs root")
class DeviceDiskTests(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="chaos-disk-test-")
        self.disk = DeviceDisk(os.path.join(self.root, "store"), size=1024 * 1024)
        self.disk.mount()
        self.addCleanup(shutil.rmtree, self.root, True)
        self.addCleanup(self.disk.unmount)

    def write(self, name, size):
        with open(os.path.join(self.disk.path, name), "ab") as file:
            file.write(b"x" * size)

    def test_a_full_disk_refuses_writes_until_it_is_freed(self):
        self.write("todos.db", 8192)
        left = self.disk.fill(0)
        self.assertLess(left, 4096)
        with self.assertRaises(OSError) as refused:
            self.write("todos.db-wal", 65536)
        self.assertEqual(refused.exception.errno, errno.ENOSPC)
        self.disk.free()
        self.write("todos.db-wal", 65536)
        self.assertGreater(self.disk.free_bytes(), 512 * 1024)

    def test_fill_leaves_the_space_asked_for(self):
        left = self.disk.fill(16384)
        self.assertGreaterEqual(left, 16384)
        self.assertLess(left, 16384 + 8192)

    def test_unmount_keeps_the_store_files_at_their_path(self):
        self.write("todos.db", 5000)
        self.disk.fill(0)
        self.disk.unmount()
        self.assertEqual(mounts_under(self.root), [])
        self.assertEqual(sorted(os.listdir(self.disk.path)), ["todos.db"])
        self.assertEqual(os.path.getsize(os.path.join(self.disk.path, "todos.db")), 5000)


class DiskFullScheduleTests(unittest.TestCase):
    def test_the_fault_is_drawn_without_moving_the_other_events(self):
        _, events = make_schedule(42, Shape(seconds=10))
        disk_full = [event for event in events if event.kind == "disk-full"]
        self.assertTrue(disk_full)
        for event in disk_full:
            self.assertTrue(0.5 <= event.args["seconds"] <= 3.0)
            self.assertIn(event.args["leave"], (0, 4096, 16384))
        # docs/chaos.md: seed 42 over 10 s has drop 3, kill-device 1, kill-server 2 and 3 offline
        # bursts, as before the fault existed.
        kinds = [event.kind + ("-burst" if event.args.get("burst") else "") for event in events if event.kind != "cmd"]
        self.assertEqual((kinds.count("drop"), kinds.count("kill-device"), kinds.count("kill-server"),
                          kinds.count("partition-burst")), (3, 1, 2, 3))

    def test_a_seed_gives_the_same_schedule(self):
        first = make_schedule(7, Shape(seconds=20, postgres=True, instances=2))
        second = make_schedule(7, Shape(seconds=20, postgres=True, instances=2))
        self.assertEqual(first, second)


if __name__ == "__main__":
    unittest.main()
