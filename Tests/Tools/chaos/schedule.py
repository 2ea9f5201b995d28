"""The schedule of a chaos run: a pure function of the seed and the run's shape.

The same seed, backend, seconds and device count always give the same list of events (their
times, devices, operations, ids, texts and faults). What a replay cannot fix is the timing inside
the processes: which request a fault meets, how far a push got when a kill came.
"""
import random
from dataclasses import dataclass, field

POLICIES = ("client", "server", "cancel", "random")
PUSH_MODES = ("serial", "parallel", "batched")
DISK_FULL_LEAVE = (0, 4096, 16384)  # bytes left free on a full disk


@dataclass
class Shape:
    seconds: float
    devices: int = 5
    users: int = 3
    ids: int = 12
    instances: int = 1  # server instances (2 on PostgreSQL)
    postgres: bool = False


@dataclass(order=True)
class Event:
    t: float
    seq: int
    kind: str = field(compare=False)  # "cmd" or a fault kind
    target: str = field(compare=False, default="")  # a device (d0…), an instance (s0…) or ""
    args: dict = field(compare=False, default_factory=dict)


def device_user(shape, index):
    return f"u{index % shape.users}"


def device_instance(shape, index):
    return f"s{index % shape.instances}"


def make_schedule(seed, shape):
    """Returns (policies by device, events sorted by time)."""
    rng = random.Random(f"chaos-{seed}")
    devices = [f"d{i}" for i in range(shape.devices)]
    policies = {device: rng.choice(POLICIES) for device in devices}
    ids = [f"item-{i:02d}" for i in range(shape.ids)]
    events = []
    seq = 0

    def add(t, kind, target="", **args):
        nonlocal seq
        seq += 1
        events.append(Event(round(t, 3), seq, kind, target, args))

    def write(t, device, serial):
        op = rng.choices(("insert", "update", "delete", "undelete"), weights=(4, 8, 3, 1))[0]
        item = rng.choice(ids)
        args = {"op": op, "id": item}
        if op != "delete":
            args["text"] = f"{device}#{serial}"
        add(t, "cmd", device, **args)

    for device in devices:
        t = rng.uniform(0.0, 0.5)
        serial = 0
        add(0.0, "cmd", device, op="live", on=rng.random() < 0.5)
        while t < shape.seconds:
            serial += 1
            roll = rng.random()
            if roll < 0.55:
                write(t, device, serial)
            elif roll < 0.70:
                add(t, "cmd", device, op="push", mode=rng.choice(PUSH_MODES))
            elif roll < 0.82:
                add(t, "cmd", device, op="pull", queryId=rng.choice((None, "all", f"mine-{device}")))
            elif roll < 0.85:
                add(t, "cmd", device, op="purge", queryId=rng.choice((None, "all")), force=rng.random() < 0.25)
            elif roll < 0.89:
                add(t, "cmd", device, op="live", on=rng.random() < 0.5)
            elif roll < 0.91:
                add(t, "cmd", device, op="passphrase")
            elif roll < 0.93:
                add(t, "cmd", device, op="rotate")
            elif roll < 0.96:
                add(t, "cmd", device, op="push", mode=rng.choice(PUSH_MODES))
            else:
                # An offline burst: the device is cut off while it writes several times.
                length = rng.uniform(1.5, 4.0)
                add(t, "partition", device, seconds=round(length, 3), burst=True)
                for k in range(rng.randint(4, 10)):
                    write(t + 0.05 + k * length / 12, device, f"{serial}.{k}")
                add(t + length + 0.1, "cmd", device, op="push", mode=rng.choice(PUSH_MODES))
            t += rng.uniform(0.15, 0.8)

    t = rng.uniform(1.0, 3.0)
    instances = [f"s{i}" for i in range(shape.instances)]
    while t < shape.seconds - 1.0:
        roll = rng.random()
        if roll < 0.25:
            add(t, "kill-device", rng.choice(devices), down=round(rng.uniform(0.2, 2.0), 3))
        elif roll < 0.40:
            add(t, "kill-server", rng.choice(instances), down=round(rng.uniform(0.2, 2.0), 3))
        elif roll < 0.48 and shape.postgres:
            add(t, "storage-outage", "", seconds=round(rng.uniform(1.0, 4.0), 3))
        else:
            kind = rng.choice(("partition", "drop", "delay", "cut", "reset"))
            add(t, kind, rng.choice(devices), seconds=round(rng.uniform(0.5, 3.0), 3), delay=round(rng.uniform(0.05, 1.5), 3))
        t += rng.uniform(0.5, 2.0)
    # A full disk on one device's store, drawn from a stream of its own so that adding this fault
    # left every other event of a seed where it was.
    disk = random.Random(f"chaos-{seed}-disk-full")
    t = disk.uniform(2.0, 5.0)
    while t < shape.seconds - 1.0:
        add(t, "disk-full", disk.choice(devices), seconds=round(disk.uniform(0.5, 3.0), 3),
            leave=disk.choice(DISK_FULL_LEAVE))
        t += disk.uniform(3.0, 8.0)
    events.sort()
    return policies, events
