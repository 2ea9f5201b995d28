#!/usr/bin/env python3
"""Summarises campaign reports (scripts/chaos --report FILE) as the Markdown tables of docs/chaos.md.

    python3 Tests/Tools/chaos/summary.py FILE…
"""
import json
import sys
from collections import Counter, defaultdict


def ranges(seeds):
    """Sorted seeds as runs of consecutive ones: `2000–2049, 10000–10013`."""
    spans = []
    for seed in seeds:
        if spans and seed == spans[-1][1] + 1:
            spans[-1][1] = seed
        elif not spans or seed != spans[-1][1]:
            spans.append([seed, seed])
    return ", ".join(f"{a}–{b}" if a != b else f"{a}" for a, b in spans)


def phases(records):
    """The average time of each phase of a run, over the records that carry them: `; of which …`."""
    timed = [record["phases"] for record in records if record.get("phases")]
    if not timed:
        return ""
    names = [name for name in ("setup", "start", "play", "settle", "verify", "stop") if name in timed[0]]
    return (f"; of which, on average over {len(timed)} runs: "
            + ", ".join(f"{name} {sum(p.get(name, 0) for p in timed) / len(timed):.1f} s" for name in names))


def main(paths):
    """One line per backend (runs, divergent runs, seeds, lengths, builds, run times), then the
    faults and the counts as tables with a column per backend, then the divergences."""
    runs = defaultdict(list)
    for path in paths:
        with open(path) as file:
            for line in file:
                record = json.loads(line)
                runs[record["backend"]].append(record)
    backends = sorted(runs)
    faults, stats = defaultdict(Counter), defaultdict(Counter)
    for backend in backends:
        records = runs[backend]
        for record in records:
            faults[backend].update(record["faults"])
            stats[backend].update({key: value for key, value in record["stats"].items() if isinstance(value, int)})
        divergent = [record for record in records if record["divergences"]]
        seeds = sorted(record["seed"] for record in records)
        builds = "/".join(sorted({record.get("build", "debug") for record in records}))
        lengths = "/".join(f"{seconds:g}" for seconds in sorted({record["seconds"] for record in records}))
        elapsed = sorted(record.get("elapsed", 0) for record in records)
        print(f"- **{backend}**: {len(records)} runs, {len(divergent)} divergent (seeds {ranges(seeds)}; "
              f"{lengths} s schedules, {builds} builds, {elapsed[0]:.0f}–{elapsed[-1]:.0f} s a run in all, "
              f"{sum(elapsed) / len(elapsed):.0f} s on average){phases(records)}")
    for title, table in (("Fault", faults), ("Count", stats)):
        print(f"\n| {title} | " + " | ".join(backends) + " |")
        print("| --- |" + " --- |" * len(backends))
        for key in sorted(set().union(*(table[backend] for backend in backends))):
            print(f"| {key} | " + " | ".join(f"{table[backend][key]:,}" for backend in backends) + " |")
    for backend in backends:
        for record in runs[backend]:
            if record["divergences"]:
                print(f"\n- {backend} seed {record['seed']}: " + "; ".join(record["divergences"][:3]))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip())
    main(sys.argv[1:])
