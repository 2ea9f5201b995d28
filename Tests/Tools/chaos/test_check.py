"""The checker's own tests: each kind of divergence, made up in a small history, is reported, and
a clean history is not. scripts/chaos runs them before every campaign."""
import unittest

from check import check

T0 = 1_000_000.0


def send(req, method, path, t, body=None, if_match=None, pid=1):
    line = {"ev": "send", "pid": pid, "req": req, "method": method, "path": path, "t": t}
    if body is not None:
        line["body"] = body
    if if_match:
        line["ifMatch"] = f'"{if_match}"'
    return line


def recv(req, status, t, body=None, pid=1):
    return {"ev": "recv", "pid": pid, "req": req, "status": status, "t": t, "body": body}


def item(version, text, stamp, deleted=False, item_id="a"):
    return {"id": item_id, "version": version, "text": text, "updatedAt": stamp, "deleted": deleted}


def settled(rows):
    return {"ok": True, "rows": rows, "pending": [], "errors": 0}


class CheckerTests(unittest.TestCase):
    def run_check(self, history, server, rows):
        return check(["d0"], {"d0": "u0"}, {"d0": history}, {"u0": server}, {"d0": settled(rows)},
                     {"d0": (True, "")})[0]

    def test_a_clean_history_passes(self):
        history = [send(1, "POST", "/tables/todos", T0, {"id": "a", "text": "x"}),
                   recv(1, 201, T0 + 0.1, item("v1", "x", "2026-01-01T00:00:01.000Z")),
                   send(2, "PATCH", "/tables/todos/a", T0 + 1, {"id": "a", "text": "y"}, if_match="v1"),
                   recv(2, 200, T0 + 1.1, item("v2", "y", "2026-01-01T00:00:02.000Z"))]
        final = item("v2", "y", "2026-01-01T00:00:02.000Z")
        self.assertEqual(self.run_check(history, [final], [{"id": "a", "version": "v2", "text": "y"}]), [])

    def test_a_lost_acknowledged_write_is_reported(self):
        history = [send(1, "POST", "/tables/todos", T0, {"id": "a", "text": "x"}),
                   recv(1, 201, T0 + 0.1, item("v1", "x", "2026-01-01T00:00:01.000Z"))]
        final = item("v9", "other", "2026-01-01T00:00:05.000Z")
        found = self.run_check(history, [final], [{"id": "a", "version": "v9", "text": "other"}])
        self.assertTrue(any("acknowledged write lost" in line for line in found), found)

    def test_a_version_that_begins_with_w_slash_is_not_a_weak_etag(self):
        # Seeds 20109 and 20117: the server's version "W/TqJiuagj7utq5Z" was overwritten by a delete
        # sent with If-Match "W/TqJiuagj7utq5Z"; the checker took the version's W/ for a weak prefix.
        history = [send(1, "POST", "/tables/todos", T0, {"id": "a", "text": "x"}),
                   recv(1, 201, T0 + 0.1, item("W/TqJiuagj7utq5Z", "x", "2026-01-01T00:00:01.000Z")),
                   send(2, "DELETE", "/tables/todos/a", T0 + 1, if_match="W/TqJiuagj7utq5Z"),
                   recv(2, 200, T0 + 1.1, item("cKDdFeRqGrNiqpNb", "x", "2026-01-01T00:00:02.000Z", deleted=True))]
        final = item("cKDdFeRqGrNiqpNb", "x", "2026-01-01T00:00:02.000Z", deleted=True)
        self.assertEqual(self.run_check(history, [final], []), [])

    def test_a_batch_write_counts_as_acknowledged(self):
        history = [send(1, "POST", "/batch/todos", T0, {"operations": [{"method": "POST", "item": {"id": "a", "text": "x"}}]}),
                   recv(1, 200, T0 + 0.1, {"results": [{"status": 201, "body": item("v1", "x", "2026-01-01T00:00:01.000Z")}]})]
        final = item("v9", "other", "2026-01-01T00:00:05.000Z")
        found = self.run_check(history, [final], [{"id": "a", "version": "v9", "text": "other"}])
        self.assertTrue(any("acknowledged write lost" in line for line in found), found)

    def test_a_deleted_item_that_comes_back_is_reported(self):
        history = [send(1, "DELETE", "/tables/todos/a", T0, if_match="v1"),
                   recv(1, 200, T0 + 0.1, item("v2", "x", "2026-01-01T00:00:02.000Z", deleted=True))]
        final = item("v3", "x", "2026-01-01T00:00:03.000Z")
        found = self.run_check(history, [final], [{"id": "a", "version": "v3", "text": "x"}])
        self.assertTrue(any("came back" in line for line in found), found)

    def test_a_read_that_goes_backwards_is_reported(self):
        history = [send(1, "GET", "/tables/todos", T0), recv(1, 200, T0 + 0.1, [item("v2", "y", "2026-01-01T00:00:02.000Z")]),
                   send(2, "GET", "/tables/todos", T0 + 1), recv(2, 200, T0 + 1.1, [item("v1", "x", "2026-01-01T00:00:01.000Z")])]
        final = item("v2", "y", "2026-01-01T00:00:02.000Z")
        found = self.run_check(history, [final], [{"id": "a", "version": "v2", "text": "y"}])
        self.assertTrue(any("went backwards" in line for line in found), found)

    def test_rows_that_differ_and_stuck_operations_are_reported(self):
        final = item("v2", "y", "2026-01-01T00:00:02.000Z")
        found = check(["d0"], {"d0": "u0"}, {"d0": []}, {"u0": [final]},
                      {"d0": {"ok": True, "rows": [{"id": "a", "version": "v1", "text": "x"}], "pending": ["update a"],
                              "errors": 0}}, {"d0": (False, "integrity")})[0]
        self.assertTrue(any("rows differ" in line for line in found), found)
        self.assertTrue(any("stuck" in line for line in found), found)
        self.assertTrue(any("verify failed" in line for line in found), found)


def failed(op, t, kind, error, pid=1):
    return {"ev": "done", "pid": pid, "op": op, "ok": False, "t": t, "errorKind": kind, "error": error}


class DiskFullTests(unittest.TestCase):
    def run_check(self, history, windows):
        final = item("v1", "x", "2026-01-01T00:00:01.000Z")
        return check(["d0"], {"d0": "u0"}, {"d0": history}, {"u0": [final]},
                     {"d0": settled([{"id": "a", "version": "v1", "text": "x"}])}, {"d0": (True, "")},
                     {"d0": windows})

    def test_a_typed_disk_full_error_passes_and_is_counted(self):
        history = [failed("insert", T0 + 1, "diskFull", "SyncError.localStoreFailed: The disk holding s is full")]
        found, stats = self.run_check(history, [(T0 + 0.5, T0 + 2)])
        self.assertEqual(found, [])
        self.assertEqual(stats["disk-full errors reported"], 1)
        self.assertEqual(stats["disk-full faults met by a typed error"], 1)

    def test_a_full_disk_reported_as_a_raw_store_error_is_reported(self):
        for kind, error in (("store", "SQLite error 4874: disk I/O error"), ("ioError", "A disk I/O error occurred"),
                            ("sync", "SyncError.localStoreFailed: The local store failed.")):
            history = [failed("pull", T0 + 2.5, kind, error)]  # within the slack after the disk was freed
            found, _ = self.run_check(history, [(T0 + 0.5, T0 + 2)])
            self.assertTrue(any("a full disk reported as" in line for line in found), (kind, found))

    def test_a_failed_key_change_on_a_full_disk_is_checked_too(self):
        history = [{"ev": "done", "pid": 1, "op": "rotate", "ok": True, "t": T0 + 1, "keyErrorKind": "store",
                    "keyError": "SQLite error 13: database or disk is full"}]
        found, _ = self.run_check(history, [(T0 + 0.5, T0 + 2)])
        self.assertTrue(any("a full disk reported as store" in line for line in found), found)

    def test_errors_outside_a_full_disk_are_not_judged(self):
        history = [failed("insert", T0 + 10, "store", "SQLite error 4874: disk I/O error")]
        found, stats = self.run_check(history, [(T0 + 0.5, T0 + 2)])
        self.assertEqual(found, [])
        self.assertEqual(stats["disk-full faults met by a typed error"], 0)


if __name__ == "__main__":
    unittest.main()
