#!/usr/bin/env python3
"""What convbench promises about the files it writes and resumes (docs/reliability.md):
one writer per output (a second process stops at once), outputs replaced only when complete,
--resume only with the very sweep that wrote the journal, and bounded inputs. The one-shot bad
inputs (symlinks, FIFOs, devices, an output that is an input, /dev/full) are in
tests/bad_inputs/cli_cases.json; these need two processes or a sequence of runs.
Standard library only.

    test_convbench_outputs.py CONVBENCH [unittest arguments, e.g. a TestCase name]
"""
import fcntl
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import unittest

CONVBENCH = None  # set from argv in main

TINY = ["--shape", "mb1ic2ih5oc2kh3", "--algos", "reference", "--passes", "fwd", "--reps", "1",
        "--warmup", "0"]
# About a second of reference work per case on two cores, so that a second process starts
# while the first is still running.
SLOW = ["--shape", "mb2ic32ih32oc32kh3ph1", "--algos", "reference", "--reps", "3",
        "--warmup", "0"]


def convbench(*args, cwd=None):
    return subprocess.run([CONVBENCH, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def wait_for(path, timeout=60):
    deadline = time.time() + timeout
    while not pathlib.Path(path).exists() and time.time() < deadline:
        time.sleep(0.01)
    return pathlib.Path(path).exists()


class OneWriterPerOutput(unittest.TestCase):
    def test_second_sweep_with_the_same_out_stops_at_once(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp, "rows.csv")
            first = subprocess.Popen([CONVBENCH, "run", *SLOW, "--out", str(out)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
            self.assertTrue(wait_for(str(out) + ".partial"), "the first sweep never started")
            started = time.time()
            second = convbench("run", *TINY, "--out", str(out))
            self.assertLess(time.time() - started, 10, "the second process waited")
            self.assertEqual(second.returncode, 2, second.stderr)
            self.assertIn("being written by another convbench process", second.stderr)
            self.assertIn(str(out) + ".partial", second.stderr)
            _, err = first.communicate(timeout=300)
            self.assertEqual(first.returncode, 0, err)
            text = out.read_text()
            self.assertEqual(text.count("# convbench_version:"), 1, "rows of two processes")
            self.assertNotIn("mb1ic2ih5oc2kh3", text, "the second process wrote into it")
            self.assertFalse(pathlib.Path(str(out) + ".partial").exists())

    def test_resume_journal_is_locked_too(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp, "rows.csv")
            journal = pathlib.Path(str(out) + ".partial")
            journal.write_text("")
            with open(journal, "r+") as held:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
                r = convbench("run", *TINY, "--out", str(out), "--resume")
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("being written by another convbench process", r.stderr)
            self.assertEqual(journal.read_text(), "", "the journal of the holder was touched")
            self.assertFalse(out.exists())

    def test_memory_and_merge_outputs_are_locked(self):
        with tempfile.TemporaryDirectory() as tmp:
            shard = pathlib.Path(tmp, "shard.csv")
            self.assertEqual(convbench("run", *TINY, "--out", str(shard)).returncode, 0)
            for args, out in (
                    (["memory", "--shape", "mb1ic2ih5oc2kh3", "--out"], "memory.csv"),
                    (["merge"], "merged.csv")):
                target = pathlib.Path(tmp, out)
                target.write_text("kept\n")
                extra = [str(shard)] if args == ["merge"] else []
                with open(str(target) + ".partial", "w") as held:
                    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    r = convbench(*args, str(target), *extra)
                    self.assertEqual(r.returncode, 2, r.stderr)
                    self.assertIn("another convbench process", r.stderr)
                self.assertEqual(target.read_text(), "kept\n")


class CompleteOutputsOnly(unittest.TestCase):
    def test_memory_and_predict_replace_out_whole_and_leave_no_partial(self):
        with tempfile.TemporaryDirectory() as tmp:
            for command, extra in (("memory", []), ("predict", ["--cards", "gtx970"])):
                out = pathlib.Path(tmp, command + ".csv")
                out.write_text("an earlier result\n")
                r = convbench(command, "--shape", "mb1ic2ih5oc2kh3", *extra, "--out", str(out))
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("# convbench_version:", out.read_text())
                self.assertTrue(out.read_text().endswith("\n"))
                self.assertFalse(pathlib.Path(str(out) + ".partial").exists())

    def test_run_out_keeps_permissions_of_a_new_file_sane(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp, "rows.json")
            self.assertEqual(convbench("run", *TINY, "--out", str(out)).returncode, 0)
            mode = out.stat().st_mode & 0o777
            umask = os.umask(0)
            os.umask(umask)
            self.assertEqual(mode, 0o666 & ~umask)


class ResumeIdentity(unittest.TestCase):
    """--resume continues only the sweep that wrote the journal, and says what differs."""

    def interrupted_journal(self, tmp, args):
        """A finished sweep's rows left as the journal FILE.partial of `args`."""
        out = pathlib.Path(tmp, "rows.csv")
        r = convbench("run", *args, "--out", str(out))
        self.assertEqual(r.returncode, 0, r.stderr)
        out.rename(str(out) + ".partial")
        return out

    def test_other_shapes_are_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = self.interrupted_journal(tmp, TINY)
            other = [a if a != "mb1ic2ih5oc2kh3" else "mb1ic2ih6oc2kh3" for a in TINY]
            r = convbench("run", *other, "--out", str(out), "--resume")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("another sweep", r.stderr)
            self.assertIn("list of cases differs", r.stderr)
            # The journal's row that is no case of this sweep, by its canonical descriptor.
            self.assertIn("ic2ih5iw5oc2", r.stderr)
            self.assertTrue(pathlib.Path(str(out) + ".partial").exists(), "journal removed")

    def test_added_shape_is_refused_by_the_digest(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = self.interrupted_journal(tmp, TINY)
            r = convbench("run", *TINY, "--shape", "mb1ic2ih6oc2kh3", "--out", str(out),
                          "--resume")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("sweep_cases: '1' vs '2'", r.stderr)

    def test_other_settings_are_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = self.interrupted_journal(tmp, TINY)
            for extra, named in ((["--seed", "7"], "seed"), (["--fill", "integers"], "fill"),
                                 (["--mb", "2"], "mb")):
                r = convbench("run", *TINY, *extra, "--out", str(out), "--resume")
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(named + ": '", r.stderr)

    def test_another_match_is_another_sweep(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp, "m.csv")
            two = ["--shape", "mb1ic2ih5oc2kh3n\"a1\"", "--shape", "mb1ic2ih6oc2kh3n\"b1\"",
                   "--algos", "reference", "--passes", "fwd", "--reps", "1", "--warmup", "0"]
            r = convbench("run", *two, "--match", "1", "--out", str(out))
            self.assertEqual(r.returncode, 0, r.stderr)
            r = convbench("run", *two, "--match", "^a", "--out", str(out), "--resume")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("another sweep", r.stderr)
            self.assertIn("match", r.stderr)
            r = convbench("run", *two, "--match", "1", "--out", str(out), "--resume")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("2 of 2 cases already in", r.stderr)

    def test_same_sweep_resumes(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = self.interrupted_journal(tmp, TINY)
            r = convbench("run", *TINY, "--out", str(out), "--resume")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("1 of 1 cases already in", r.stderr)
            self.assertTrue(out.exists())


class RowsToStdout(unittest.TestCase):
    """--out -: nothing but the rows on stdout (CSV unless --format json), the table on
    stderr, and no file written."""

    def test_csv_by_default_and_the_table_on_stderr(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = convbench("run", *TINY, "--out", "-", cwd=tmp)
            self.assertEqual(r.returncode, 0, r.stderr)
            lines = [l for l in r.stdout.splitlines() if not l.startswith("# ")]
            self.assertTrue(lines[0].startswith("suite,layer,descriptor,pass,algorithm"), lines)
            self.assertEqual(len(lines), 2, r.stdout)
            self.assertTrue(lines[1].split(",")[6] == "ok", lines[1])
            self.assertIn("algorithm", r.stderr)
            self.assertIn("reference", r.stderr)
            self.assertNotIn("rows in", r.stderr)
            self.assertEqual(list(pathlib.Path(tmp).iterdir()), [])

    def test_match_keeps_the_named_layers(self):
        shapes = ["--shape", "mb1ic2ih5oc2kh3n\"conv1\"", "--shape", "mb1ic2ih6oc2kh3n\"fc\"",
                  "--shape", "mb1ic2ih7oc2kh3n\"conv2\""]
        r = convbench("run", *shapes, *TINY[2:], "--match", "^conv", "--out", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [l.split(",") for l in r.stdout.splitlines()[1:] if not l.startswith("#")]
        self.assertEqual([row[1] for row in rows[1:]], ["conv1", "conv2"], r.stdout)

    def test_json_rows_parse(self):
        import json
        r = convbench("run", *TINY, "--out", "-", "--format", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual([row["algorithm"] for row in doc["rows"]], ["reference"])


class Limits(unittest.TestCase):
    def test_default_cap_refuses_a_huge_shape_file_at_once(self):
        with tempfile.TemporaryDirectory() as tmp:
            shapes = pathlib.Path(tmp, "many.txt")
            shapes.write_text("".join("mb1ic2ih%doc2kh3\n" % (5 + i) for i in range(3400)))
            started = time.time()
            r = convbench("run", "--batch-file", str(shapes), "--algos", "reference")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("10200 cases (3400 layers x 3 passes x 1 algorithms)", r.stderr)
            self.assertIn("--max-cases 10200", r.stderr)
            self.assertLess(time.time() - started, 30)
            r = convbench("run", "--batch-file", str(shapes), "--algos", "reference",
                          "--passes", "fwd", "--max-cases", "3400", "--shard", "1/3400",
                          "--reps", "1", "--warmup", "0", "--format", "csv")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("1 cases to run of the sweep's 3400", r.stderr)


def main():
    global CONVBENCH
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    CONVBENCH = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2)


if __name__ == "__main__":
    main()
