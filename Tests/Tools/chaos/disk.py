"""The small filesystem of a chaos device's store, which the suite fills to make a full disk.

Each device's store directory is a tmpfs of its own (mounted as root), so that filling it touches
nothing else: the history log and the device's stderr stay outside it. At the end of a run the
store's files are copied out and the tmpfs is unmounted, so that a kept run keeps its stores at
the same paths. Should the campaign die without its finally blocks, a watchdog unmounts whatever
is still mounted under the work directory.
"""
import errno
import os
import shutil
import subprocess
import tempfile

SIZE = 32 * 1024 * 1024  # bytes; a store of the suite stays well under 1 MiB, a rotation doubles it
FILLER = ".chaos-disk-full"


def mounting_possible():
    """Whether this process can mount a tmpfs (root; the suite skips disk-full faults otherwise)."""
    return os.geteuid() == 0 and shutil.which("mount") is not None


def mounts_under(directory):
    """The mount points under `directory`, deepest first."""
    prefix = os.path.realpath(directory).rstrip("/") + "/"
    points = []
    with open("/proc/self/mounts") as mounts:
        for line in mounts:
            point = line.split()[1].replace("\\040", " ")
            if point.startswith(prefix):
                points.append(point)
    return sorted(points, key=len, reverse=True)


def start_watchdog(directory):
    """Unmounts every tmpfs left under `directory` once this process is gone."""
    script = (f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; "
              f"awk -v p='{os.path.realpath(directory).rstrip('/')}/' 'index($2, p) == 1 {{print $2}}' /proc/mounts "
              "| sort -r | xargs -r -n 1 umount -l")
    subprocess.Popen(["bash", "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)


class DeviceDisk:
    """A tmpfs at `path` (the store's directory) that `fill` makes full and `free` empties again."""

    def __init__(self, path, size=SIZE):
        self.path = os.path.realpath(path)
        self.size = size
        self.mounted = False
        self.full = False

    def mount(self):
        os.makedirs(self.path, mode=0o700, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={self.size},mode=0700", "tmpfs", self.path],
                       check=True, capture_output=True)
        self.mounted = True

    def free_bytes(self):
        status = os.statvfs(self.path)
        return status.f_bavail * status.f_frsize

    def fill(self, leave=0):
        """Fills the filesystem until at most `leave` bytes (rounded down to pages) are free; returns
        the bytes left free."""
        if not self.mounted:
            return None
        descriptor = os.open(os.path.join(self.path, FILLER), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            want = self.free_bytes() - leave
            if want > 0:
                try:
                    os.posix_fallocate(descriptor, 0, want)
                except OSError as error:
                    if error.errno != errno.ENOSPC:
                        raise
            if leave == 0:
                # What posix_fallocate could not place: written a page at a time until ENOSPC.
                page = b"\0" * 4096
                while True:
                    try:
                        os.write(descriptor, page)
                    except OSError as error:
                        if error.errno == errno.ENOSPC:
                            break
                        raise
        finally:
            os.close(descriptor)
        self.full = True
        return self.free_bytes()

    def free(self):
        try:
            os.unlink(os.path.join(self.path, FILLER))
        except FileNotFoundError:
            pass
        self.full = False

    def unmount(self):
        """Copies the store's files out, unmounts, and puts them back at the same path."""
        if not self.mounted:
            return
        self.free()
        keep = tempfile.mkdtemp(prefix="chaos-store-", dir=os.path.dirname(self.path))
        try:
            for name in os.listdir(self.path):
                source = os.path.join(self.path, name)
                if os.path.isfile(source):
                    shutil.copy2(source, keep)
            done = subprocess.run(["umount", self.path], capture_output=True)
            if done.returncode != 0:
                subprocess.run(["umount", "-l", self.path], capture_output=True)
            self.mounted = False
            for name in os.listdir(keep):
                shutil.move(os.path.join(keep, name), os.path.join(self.path, name))
        finally:
            shutil.rmtree(keep, ignore_errors=True)
