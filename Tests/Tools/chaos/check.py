"""The checker of a chaos run: reads the devices' history logs and the final states, and returns
the divergences found (an empty list: the run converged and kept every acknowledged write)."""
import json
from collections import defaultdict
from datetime import datetime

TABLE = "todos"


def fold(item_id):
    return item_id.lower() if isinstance(item_id, str) else item_id


def tag(value):
    """An ETag, If-Match or version, without the weak prefix (`W/` before the quotes) and quotes.
    A version itself may begin with `W/` (a random base64 text does, 1 in 4096): only `W/"` is a
    prefix."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    if value.startswith('W/"'):
        value = value[2:]
    if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
        value = value[1:-1]
    return value


def instant(value):
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def read_history(path):
    lines = []
    try:
        with open(path, encoding="utf-8") as file:
            for line in file:
                try:
                    lines.append(json.loads(line))
                except ValueError:
                    pass  # a line cut by a kill -9
    except FileNotFoundError:
        pass
    return lines


def requests_of(lines):
    """The device's requests: each send joined with its answer (recv or fail), in send order."""
    records = {}  # (pid, number) -> the latest request sent with it
    order = []
    for line in lines:
        key = (line.get("pid"), line.get("req"))
        if line.get("ev") == "send":
            records[key] = dict(line, answered=False)
            order.append(records[key])
        elif line.get("ev") in ("recv", "fail") and key in records:
            record = records[key]
            record["answered"] = line["ev"] == "recv"
            record["status"] = line.get("status")
            record["answer"] = line.get("body")
            record["t_recv"] = line.get("t")
    return order


def writes_of(device, requests):
    """Every write a device sent (single requests and batch operations), normalized."""
    writes = []
    for record in requests:
        path = record.get("path", "")
        parts = [part for part in path.split("/") if part]
        base = dict(dev=device, t_send=record.get("t"), t_recv=record.get("t_recv"), answered=record["answered"])
        if parts[:1] == ["batch"]:
            operations = (record.get("body") or {}).get("operations") or []
            results = (record.get("answer") or {}).get("results") if isinstance(record.get("answer"), dict) else None
            for index, operation in enumerate(operations):
                method = operation.get("method")
                item = operation.get("item") or {}
                result = results[index] if results and index < len(results) and record.get("status") == 200 else None
                writes.append(dict(
                    base, kind={"POST": "insert", "PATCH": "update", "DELETE": "delete"}.get(method, method),
                    id=fold(operation.get("id") or item.get("id")), if_match=tag(operation.get("ifMatch")),
                    text=item.get("text"), status=result.get("status") if result else None,
                    item=result.get("body") if result and isinstance(result.get("body"), dict) else None,
                    answered=result is not None))
            continue
        if parts[:2] != ["tables", TABLE] or record.get("method") == "GET":
            continue
        body = record.get("body") if isinstance(record.get("body"), dict) else {}
        if len(parts) == 2:
            kind, item_id = "insert", body.get("id")
        else:
            kind = {"POST": "undelete", "PATCH": "update", "DELETE": "delete"}[record["method"]]
            item_id = parts[2]
        answer = record.get("answer")
        writes.append(dict(
            base, kind=kind, id=fold(item_id), if_match=tag(record.get("ifMatch")), text=body.get("text"),
            status=record.get("status"), item=answer if isinstance(answer, dict) and "id" in answer else None))
    return writes


def items_read(record):
    answer = record.get("answer")
    if isinstance(answer, list):
        return answer
    if isinstance(answer, dict):
        for key in ("results", "items", "value"):
            if isinstance(answer.get(key), list):
                return answer[key]
        if "id" in answer:
            return [answer]
    return []


def ok(status):
    return isinstance(status, int) and 200 <= status < 300


# A command that began while the disk was full may fail a little after it was freed.
DISK_FULL_SLACK = 1.0
STORE_KINDS = ("store", "ioError", "diskFull")


def failures_of(line):
    """(kind, text) of each failure a history line reports: a command, a job, a resolution, or
    the key change of a passphrase change or rotation."""
    found = []
    if line.get("ev") in ("done", "job", "conflict") and line.get("ok") is False:
        found.append((line.get("errorKind"), line.get("error") or ""))
    if line.get("keyError"):
        found.append((line.get("keyErrorKind"), line.get("keyError")))
    return found


def check_disk_full(device, lines, windows, divergences, stats):
    """While a device's disk is full, every store failure it reports is the typed disk-full error
    (not a raw SQLite error, an I/O error or another store error); counts the errors and the
    full-disk faults that met one."""
    met = set()
    for line in lines:
        for kind, text in failures_of(line):
            if kind == "diskFull":
                stats["disk-full errors reported"] += 1
            during = [index for index, (start, end) in enumerate(windows)
                      if start <= line.get("t", 0) <= (end if end is not None else float("inf")) + DISK_FULL_SLACK]
            if not during:
                continue
            if kind == "diskFull":
                met.update(during)
            elif kind in STORE_KINDS or "SQLite" in text or "localStoreFailed" in text:
                divergences.append(f"{device}: a full disk reported as {kind}, not diskFull: {text[:300]}")
    stats["disk-full faults"] += len(windows)
    stats["disk-full faults met by a typed error"] += len(met)


def check(devices, users, histories, server_rows, finals, verifications, disk_full=None):
    """devices: names; users: device -> user; histories: device -> lines; server_rows: user ->
    items (deleted ones included); finals: device -> the last settle reply or None;
    verifications: device -> (passed, text); disk_full: device -> [(start, end)] wall-clock
    seconds its store's disk was full. Returns (divergences, stats)."""
    divergences = []
    stats = defaultdict(int)
    writes_by_user = defaultdict(list)
    for device in devices:
        lines = histories[device]
        check_disk_full(device, lines, (disk_full or {}).get(device, []), divergences, stats)
        requests = requests_of(lines)
        writes = writes_of(device, requests)
        writes_by_user[users[device]].extend(writes)
        for line in lines:
            if line.get("ev") == "conflict":
                stats[f"conflicts resolved ({line.get('resolution')}, {line.get('conflict')})"] += 1
            if line.get("ev") == "done" and line.get("ok"):
                stats[f"op {line.get('op')}"] += 1
            if line.get("ev") == "job":
                stats[f"job {line.get('job')} {'ok' if line.get('ok') else 'failed'}"] += 1
            if line.get("ev") == "start":
                stats["device starts"] += 1
        # Reads never go backwards: an item's updatedAt in an answer is never older than one the
        # device saw in an answer received before this request was sent.
        seen = {}
        answered = sorted((r for r in requests if r["answered"] and ok(r.get("status"))), key=lambda r: r["t_recv"])
        pending = []  # (t_recv, id, updatedAt, version) not yet visible to later sends
        for record in sorted((r for r in requests if r["answered"] and ok(r.get("status"))), key=lambda r: r["t"]):
            while answered and answered[0]["t_recv"] < record["t"]:
                done = answered.pop(0)
                for item in (items_read(done) if done.get("method") == "GET" else
                             [done["answer"]] if isinstance(done.get("answer"), dict) and "id" in done["answer"] else []):
                    stamp = instant(item.get("updatedAt"))
                    if stamp is not None and stamp > seen.get(fold(item.get("id")), (-1, None))[0]:
                        seen[fold(item.get("id"))] = (stamp, item.get("version"))
            if record.get("method") != "GET":
                continue
            stats["reads checked"] += 1
            for item in items_read(record):
                stamp = instant(item.get("updatedAt"))
                before = seen.get(fold(item.get("id")))
                if stamp is not None and before and stamp < before[0]:
                    divergences.append(
                        f"{device}: a read went backwards: {item.get('id')} version {item.get('version')} (updatedAt "
                        f"{item.get('updatedAt')}) after version {before[1]} (request {record.get('req')} of pid {record.get('pid')})")

    for user, writes in writes_by_user.items():
        final = {}
        for item in server_rows.get(user, []):
            key = fold(item.get("id"))
            if key in final:
                divergences.append(f"{user}: the server has the id {item.get('id')} twice")
            final[key] = item
        # id -> versions some write was sent over and not refused (answered 2xx; or not answered,
        # or a 5xx: the server may have applied it)
        overwritten = defaultdict(set)
        for write in writes:
            status = write["status"]
            if write["if_match"] and (not write["answered"] or not isinstance(status, int) or ok(status) or status >= 500):
                overwritten[write["id"]].add(write["if_match"])
        # Every acknowledged write is on the server, or was overwritten by a write sent over its version.
        for write in writes:
            if write["kind"] == "delete" or not ok(write["status"]) or not write["item"]:
                continue
            stats["acknowledged writes"] += 1
            version = tag(write["item"].get("version"))
            now = final.get(write["id"])
            if now is not None and tag(now.get("version")) == version:
                if now.get("text") != write["item"].get("text"):
                    divergences.append(f"{user}: {write['id']} version {version} has other text on the server")
                continue
            if version in overwritten[write["id"]]:
                continue
            divergences.append(
                f"{user}: acknowledged write lost: {write['dev']} {write['kind']} {write['id']} -> version {version} "
                f"text {write['item'].get('text')!r} (acknowledged at {write['t_recv']}); the server has version "
                f"{tag(now.get('version')) if now else None} text {now.get('text') if now else None!r}, and no write was sent over it")
        # No deleted item comes back without an undelete sent after its delete.
        for key, item in final.items():
            if item.get("deleted"):
                continue
            deletes = [w for w in writes if w["id"] == key and w["kind"] == "delete" and ok(w["status"])]
            if not deletes:
                continue
            last = max(deletes, key=lambda w: w["t_recv"] or w["t_send"])
            revivals = [w for w in writes if w["id"] == key and w["kind"] == "undelete" and w["t_send"] >= last["t_send"]]
            if not revivals:
                divergences.append(
                    f"{user}: {item.get('id')} came back after {last['dev']}'s acknowledged delete at {last['t_recv']} "
                    "with no undelete sent after it")

    for device in devices:
        final = finals.get(device)
        user = users[device]
        if final is None:
            divergences.append(f"{device}: did not answer its last settle")
            continue
        if not final.get("ok"):
            divergences.append(f"{device}: the last settle failed: {final.get('error')}")
            continue
        if final.get("pending"):
            divergences.append(f"{device}: operations stuck in the queue: {final['pending']}")
        if final.get("errors"):
            divergences.append(f"{device}: {final['errors']} operation errors left")
        local = {}
        for row in final.get("rows", []):
            key = fold(row.get("id"))
            if key in local:
                divergences.append(f"{device}: the id {row.get('id')} is twice in the store")
            local[key] = (row.get("text"), tag(row.get("version")))
        remote = {fold(i.get("id")): (i.get("text"), tag(i.get("version")))
                  for i in server_rows.get(user, []) if not i.get("deleted")}
        if local != remote:
            differ = sorted(set(local) | set(remote), key=str)
            details = [f"{k}: device {local.get(k)} server {remote.get(k)}" for k in differ if local.get(k) != remote.get(k)]
            divergences.append(f"{device}: rows differ from the server's ({user}): " + "; ".join(details[:6]))
        passed, text = verifications.get(device, (False, "not verified"))
        if not passed:
            divergences.append(f"{device}: sync-keys verify failed: {text}")
    return divergences, dict(stats)
