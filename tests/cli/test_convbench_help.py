#!/usr/bin/env python3
"""Every subcommand's --help: real placeholders (no CLI11 TEXT/INT or range noise), a
repeatable flag shown as it is accepted, and an "Examples:" footer whose command lines the
binary accepts. Standard library only.

    test_convbench_help.py CONVBENCH [unittest arguments]
"""
import fnmatch
import json
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile
import unittest

CONVBENCH = None  # set from argv in main
SUBCOMMANDS = ["list", "run", "memory", "predict", "merge", "compare"]
TINY = "mb2ic3ih7oc4kh3ph1"


def convbench(*args, cwd=None):
    return subprocess.run([CONVBENCH, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def help_text(command):
    result = convbench(command, "--help")
    assert result.returncode == 0, (command, result.stderr)
    return result.stdout


def examples(command):
    """The argument lists (without the leading 'convbench') of a subcommand's examples."""
    text = help_text(command)
    _, found, footer = text.partition("\nExamples:\n")
    assert found, f"{command} --help has no 'Examples:' footer"
    lines = []
    for line in footer.splitlines():
        if not line.startswith("  convbench "):
            break
        lines.append(shlex.split(line.strip())[1:])
    return lines


def flags(args):
    return [a.split("=", 1)[0] for a in args if a.startswith("--")]


class Placeholders(unittest.TestCase):
    def test_no_cli11_type_names(self):
        for command in SUBCOMMANDS:
            text = help_text(command)
            with self.subTest(command=command):
                self.assertNotIn("TEXT", text)
                self.assertNotIn(" INT", text)
                self.assertNotIn(":INT", text)
                self.assertIsNone(re.search(r"in \[\d", text), "a CLI11 range in the help")

    def test_repeatable_options_show_one_value_per_flag(self):
        for command in ["run", "memory", "predict"]:
            text = help_text(command)
            with self.subTest(command=command):
                self.assertIn("--shape DESCRIPTOR  (repeat: --shape A --shape B)", text)
                # "--shape DESC ..." reads as "--shape A B", which the parser refuses.
                self.assertNotRegex(text, r"--shape \S+ \.\.\.")

    def test_repeatable_syntax_is_the_accepted_one(self):
        with tempfile.TemporaryDirectory() as tmp:
            two = convbench("memory", "--shape", TINY, "--shape", TINY + "n\"b\"", "--format",
                            "csv", "--passes", "fwd", cwd=tmp)
            self.assertEqual(two.returncode, 0, two.stderr)
            spaced = convbench("memory", "--shape", TINY, TINY + "n\"b\"", cwd=tmp)
            self.assertEqual(spaced.returncode, 2, spaced.stdout)


class Examples(unittest.TestCase):
    def test_every_subcommand_has_two_to_four_examples(self):
        for command in SUBCOMMANDS:
            with self.subTest(command=command):
                lines = examples(command)
                self.assertTrue(2 <= len(lines) <= 4, lines)
                for args in lines:
                    self.assertEqual(args[0], command, args)

    def test_example_flags_are_options_of_their_subcommand(self):
        for command in SUBCOMMANDS:
            options = set(re.findall(r"^\s+(?:-\w,)?(--[\w-]+)", help_text(command), re.M))
            for args in examples(command):
                with self.subTest(example=" ".join(args)):
                    self.assertLessEqual(set(flags(args)), options)

    def test_run_examples_parse_and_build_their_sweep(self):
        # --max-cases 1 stops each sweep after its flags are parsed and validated and its case
        # list built, before anything runs or any file is written.
        with tempfile.TemporaryDirectory() as tmp:
            for args in examples("run"):
                with self.subTest(example=" ".join(args)):
                    result = convbench(*args, "--max-cases", "1", cwd=tmp)
                    self.assertEqual(result.returncode, 2, result.stderr)
                    self.assertIn("--max-cases", result.stderr)
                    self.assertEqual(list(pathlib.Path(tmp).iterdir()), [])

    def test_list_memory_and_predict_examples_run(self):
        listing = json.loads(convbench("list", "--format", "json").stdout)
        built = [a["name"] for a in listing["algorithms"]]
        with tempfile.TemporaryDirectory() as tmp:
            for command in ["list", "memory", "predict"]:
                for args in examples(command):
                    with self.subTest(example=" ".join(args)):
                        globs = args[args.index("--algos") + 1] if "--algos" in args else ""
                        if globs and not any(fnmatch.fnmatchcase(name, glob) for glob in
                                             globs.split(",") for name in built):
                            self.skipTest("this build has no algorithm matching '%s' (not "
                                          "built: %s)" % (globs, listing["not_built"]))
                        result = convbench(*args, cwd=tmp)
                        self.assertEqual(result.returncode, 0, result.stderr)
                        self.assertTrue(result.stdout.strip())

    def test_merge_examples_merge_shards(self):
        with tempfile.TemporaryDirectory() as tmp:
            for part in ["1", "2"]:
                shard = convbench("run", "--shape", TINY, "--passes", "fwd", "--algos", "cpu.*",
                                  "--reps", "1", "--warmup", "0", "--shard", part + "/2",
                                  "--out", f"part-{part}.csv", cwd=tmp)
                self.assertEqual(shard.returncode, 0, shard.stderr)
            for args in examples("merge"):
                with self.subTest(example=" ".join(args)):
                    # Through a shell, as typed: part-*.csv is the shell's glob.
                    line = " ".join(shlex.quote(CONVBENCH) if i == 0 else a
                                    for i, a in enumerate([CONVBENCH, *args]))
                    result = subprocess.run(line, shell=True, capture_output=True, text=True,
                                            cwd=tmp, timeout=300)
                    self.assertEqual(result.returncode, 0, result.stderr)
                    self.assertTrue((pathlib.Path(tmp) / args[1]).stat().st_size > 0)


def main():
    global CONVBENCH
    CONVBENCH = sys.argv.pop(1)
    unittest.main()


if __name__ == "__main__":
    main()
