#!/usr/bin/env python3
"""A campaign of the chaos suite: its options, the runs one after another or N at once, and the
totals (see docs/chaos.md).

    scripts/chaos [--runs N] [--jobs N] [--seconds S] [--seed S] [--backend sqlite|postgres] [--release]
"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import unittest
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from actors import PostgresCluster  # noqa: E402
from disk import mounting_possible, start_watchdog  # noqa: E402
from run import Run, build_binaries  # noqa: E402
from schedule import Shape  # noqa: E402

RESULT = "chaos-result: "  # the last line of a job: its totals as JSON


def positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def parse_options(argv):
    parser = argparse.ArgumentParser(prog="scripts/chaos", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=positive, default=1, help="runs in the campaign (seeds SEED, SEED+1, …)")
    parser.add_argument("--jobs", type=positive, default=1,
                        help="runs at once, each job with its own work directory (and PostgreSQL cluster)")
    parser.add_argument("--seconds", type=float, default=40, help="seconds of operations and faults per run")
    parser.add_argument("--seed", type=int, help="the first seed (a random one by default); one run replays it")
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite",
                        help="sqlite: one server instance; postgres: two instances on a private cluster")
    parser.add_argument("--devices", type=positive, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the histories of runs that pass too")
    parser.add_argument("--report", help="append one JSON line per run to this file")
    parser.add_argument("--no-build", action="store_true", help="use the binaries already built")
    parser.add_argument("--release", action="store_true", help="build and run the actors in release configuration")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "ciphersync-chaos"))
    # A job of a parallel campaign: seeds SEED, SEED+STRIDE, …; its totals on its last line.
    parser.add_argument("--stride", type=positive, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--job", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.seconds <= 0:
        parser.error("--seconds must be more than 0")
    if options.jobs > options.runs:
        options.jobs = options.runs
    if options.seed is None:
        options.seed = random.SystemRandom().randrange(1, 10**9)
    return options


def job_seeds(first, runs, jobs):
    """The seeds of each job of a parallel campaign: job k runs first+k, first+k+jobs, … (every
    seed of first … first+runs-1 once)."""
    return [list(range(first + k, first + runs, jobs)) for k in range(jobs)]


def job_arguments(options, index, seeds):
    """The command line of job `index` (a campaign of its own over `seeds`, in a work directory
    of its own, with the binaries already built)."""
    arguments = ["--runs", str(len(seeds)), "--seed", str(seeds[0]), "--stride", str(options.jobs), "--job",
                 "--no-build", "--seconds", f"{options.seconds:g}", "--backend", options.backend,
                 "--devices", str(options.devices), "--workdir", os.path.join(options.workdir, f"job-{index}")]
    if options.release:
        arguments.append("--release")
    if options.keep:
        arguments.append("--keep")
    if options.report:
        arguments += ["--report", options.report]
    return arguments


def self_test(backend):
    """The checker's and the disk's own tests (a checker that cannot fail proves nothing), and on
    PostgreSQL the cluster's."""
    names = ["test_check", "test_disk", "test_campaign", "test_server"] + (["test_cluster"] if backend == "postgres" else [])
    suite = unittest.defaultTestLoader.loadTestsFromNames(names)
    if not unittest.TextTestRunner(verbosity=0).run(suite).wasSuccessful():
        sys.exit("chaos: the checker's own tests failed")


def append_report(path, record):
    """Appends one line with one write(2), so that jobs writing the same report never mix lines."""
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, (json.dumps(record) + "\n").encode())
    finally:
        os.close(descriptor)


def serial(options, binaries):
    """Runs the seeds one after another; returns (failed, totals)."""
    postgres = options.backend == "postgres"
    shape = Shape(seconds=options.seconds, devices=options.devices, instances=2 if postgres else 1, postgres=postgres)
    cluster = PostgresCluster() if postgres else None
    failed = 0
    totals = Counter()
    os.makedirs(options.workdir, exist_ok=True)
    if mounting_possible():
        start_watchdog(options.workdir)
    else:
        print("chaos: not root: the devices' stores get no disk of their own, and disk-full faults are not run",
              flush=True)
    try:
        for number in range(options.runs):
            seed = options.seed + number * options.stride
            directory = os.path.join(options.workdir, f"{options.backend}-{seed}")
            shutil.rmtree(directory, ignore_errors=True)
            os.makedirs(directory)
            print(f"chaos: run {number + 1}/{options.runs} seed {seed} backend {options.backend} "
                  f"({options.seconds:g} s, {shape.devices} devices)", flush=True)
            started = time.monotonic()
            run = Run(seed, shape, binaries, directory, cluster)
            run.phases["setup"] = round(time.monotonic() - started, 2)
            try:
                divergences, stats = run.execute()
            except Exception as error:  # the run could not be checked (its actors are stopped): a divergence
                traceback.print_exc()
                divergences, stats = [f"the run could not be checked: {error}"], Counter({"settle rounds": 0})
            elapsed = time.monotonic() - started
            for key, value in stats.items():
                totals[key] += value
            for kind, count in run.faults.items():
                totals[f"fault {kind}"] += count
            record = {"seed": seed, "backend": options.backend, "seconds": options.seconds, "elapsed": round(elapsed, 1),
                      "build": "release" if options.release else "debug", "divergences": divergences,
                      "phases": run.phases, "faults": dict(run.faults), "stats": stats, "policies": run.policies}
            if options.report:
                append_report(options.report, record)
            if divergences:
                failed += 1
                print(f"chaos: seed {seed} DIVERGED ({len(divergences)}); histories kept in {directory}", flush=True)
                for line in divergences[:20]:
                    print(f"  - {line}", flush=True)
            else:
                faults = ", ".join(f"{k} {v}" for k, v in sorted(run.faults.items()))
                print(f"chaos: seed {seed} ok in {elapsed:.0f} s (faults: {faults}; "
                      f"acknowledged writes {stats.get('acknowledged writes', 0)}, settle rounds {stats['settle rounds']})",
                      flush=True)
                if not options.keep:
                    shutil.rmtree(directory, ignore_errors=True)
                    if cluster is not None and cluster.running:
                        cluster.drop_database(run.database_name)
    finally:
        if cluster is not None:
            cluster.destroy()
    return failed, totals


def parallel(options):
    """Runs `--jobs` jobs at once, each a campaign of its own process over its share of the seeds;
    relays their lines and adds up their totals. Returns (failed, totals)."""
    script = os.path.abspath(__file__)
    children = []
    for index, seeds in enumerate(job_seeds(options.seed, options.runs, options.jobs)):
        child = subprocess.Popen([sys.executable, script, *job_arguments(options, index, seeds)], stdout=subprocess.PIPE,
                                 stdin=subprocess.DEVNULL, text=True, start_new_session=False)
        children.append(child)
    results = []

    def relay(child):
        for line in child.stdout:
            if line.startswith(RESULT):
                results.append(json.loads(line[len(RESULT):]))
            else:
                sys.stdout.write(line)
                sys.stdout.flush()

    relays = [threading.Thread(target=relay, args=(child,)) for child in children]
    for thread in relays:
        thread.start()
    try:
        for child in children:
            child.wait()
    finally:
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
                child.wait()
        for thread in relays:
            thread.join()
    # A job that ended without its totals (killed) counts all its runs as failed.
    converged = sum(result["runs"] - result["failed"] for result in results)
    totals = Counter()
    for result in results:
        totals.update(result["totals"])
    return options.runs - converged, totals


def main(argv):
    options = parse_options(argv)
    # Stopped by a signal, a campaign still stops its processes and its cluster (the finally blocks).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if options.job:
        binaries = build_binaries(True, options.release)
        failed, totals = serial(options, binaries)
        print(RESULT + json.dumps({"runs": options.runs, "failed": failed, "totals": dict(totals)}), flush=True)
        sys.exit(1 if failed else 0)
    self_test(options.backend)
    binaries = build_binaries(options.no_build, options.release)
    if options.jobs > 1:
        failed, totals = parallel(options)
    else:
        failed, totals = serial(options, binaries)
    print(f"chaos: {options.runs - failed} of {options.runs} runs converged ({options.backend}, first seed {options.seed}"
          f"{f', {options.jobs} jobs' if options.jobs > 1 else ''})")
    for key, value in sorted(totals.items()):
        print(f"  {key}: {value}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main(sys.argv[1:])
