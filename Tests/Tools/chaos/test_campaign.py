"""The campaign's options and how a parallel campaign shares its seeds among its jobs.
scripts/chaos runs these before every campaign."""
import contextlib
import io
import os
import unittest

from campaign import job_arguments, job_seeds, parse_options


def refused(argv):
    """The usage error argparse prints for `argv` (it exits 2)."""
    output = io.StringIO()
    with contextlib.redirect_stderr(output), unittest.TestCase().assertRaises(SystemExit) as stopped:
        parse_options(argv)
    return stopped.exception.code, output.getvalue()


class OptionTests(unittest.TestCase):
    def test_the_defaults_are_one_serial_debug_run(self):
        options = parse_options(["--seed", "5"])
        self.assertEqual((options.runs, options.jobs, options.release, options.seed, options.stride, options.job),
                         (1, 1, False, 5, 1, False))

    def test_jobs_and_release_are_read(self):
        options = parse_options(["--runs", "40", "--jobs", "3", "--release", "--seed", "100", "--backend", "postgres"])
        self.assertEqual((options.runs, options.jobs, options.release, options.backend), (40, 3, True, "postgres"))

    def test_more_jobs_than_runs_run_one_job_per_run(self):
        self.assertEqual(parse_options(["--runs", "2", "--jobs", "8"]).jobs, 2)

    def test_a_random_first_seed_is_drawn_once_and_kept(self):
        options = parse_options(["--runs", "3", "--jobs", "2"])
        self.assertIsInstance(options.seed, int)
        self.assertTrue(1 <= options.seed < 10**9)

    def test_bad_values_are_refused_with_a_message(self):
        for argv, words in ((["--jobs", "0"], "--jobs: must be 1 or more"), (["--runs", "-1"], "--runs: must be 1 or more"),
                            (["--jobs", "two"], "invalid positive value"), (["--seconds", "0"], "--seconds must be more than 0"),
                            (["--backend", "mysql"], "invalid choice")):
            code, message = refused(argv)
            self.assertEqual(code, 2, argv)
            self.assertIn(words, message, argv)


class JobTests(unittest.TestCase):
    def test_every_seed_runs_once_across_the_jobs(self):
        shares = job_seeds(1000, 10, 3)
        self.assertEqual(shares, [[1000, 1003, 1006, 1009], [1001, 1004, 1007], [1002, 1005, 1008]])
        self.assertEqual(sorted(seed for share in shares for seed in share), list(range(1000, 1010)))

    def test_a_job_replays_exactly_its_seeds(self):
        # A job is a campaign of its own: first seed, stride and run count give back its seeds.
        options = parse_options(["--runs", "10", "--jobs", "3", "--seed", "1000", "--release", "--report", "r.jsonl",
                                 "--workdir", "/tmp/w"])
        for index, seeds in enumerate(job_seeds(1000, 10, 3)):
            job = parse_options(job_arguments(options, index, seeds))
            self.assertTrue(job.job and job.no_build and job.release)
            self.assertEqual([job.seed + n * job.stride for n in range(job.runs)], seeds)
            self.assertEqual(job.report, "r.jsonl")
            self.assertEqual(job.workdir, os.path.join("/tmp/w", f"job-{index}"))
            self.assertEqual((job.seconds, job.backend, job.devices), (options.seconds, options.backend, options.devices))


if __name__ == "__main__":
    unittest.main()
