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


def main(paths):
    runs = defaultdict(list)
    for path in paths:
        with open(path) as file:
            for line in file:
                record = json.loads(line)
                runs[record["backend"]].append(record)
    for backend, records in sorted(runs.items()):
        faults, stats = Counter(), Counter()
        for record in records:
            faults.update(record["faults"])
            stats.update({key: value for key, value in record["stats"].items() if isinstance(value, int)})
        divergent = [record for record in records if record["divergences"]]
        seeds = sorted(record["seed"] for record in records)
        builds = "/".join(sorted({record.get("build", "debug") for record in records}))
        lengths = "/".join(f"{seconds:g}" for seconds in sorted({record["seconds"] for record in records}))
        elapsed = sorted(record.get("elapsed", 0) for record in records)
        print(f"### {backend}: {len(records)} runs, {len(divergent)} divergent "
              f"(seeds {ranges(seeds)}, {lengths} s each, {builds} builds, "
              f"{elapsed[0]:.0f}–{elapsed[-1]:.0f} s a run in all)\n")
        print("| Fault | Injected |\n| --- | --- |")
        for kind, count in sorted(faults.items()):
            print(f"| {kind} | {count} |")
        print("\n| Count | Total |\n| --- | --- |")
        for key, value in sorted(stats.items()):
            print(f"| {key} | {value} |")
        for record in divergent:
            print(f"\n- seed {record['seed']}: " + "; ".join(record["divergences"][:3]))
        print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip())
    main(sys.argv[1:])
