"""Every CPU algorithm of this build against torch.nn.functional (conv2d, conv_transpose2d,
torch.nn.grad.conv2d_input / conv2d_weight) in float64, for every pass, on seeded random
problems (batch, groups, stride, padding, dilation) and edge shapes, under each algorithm's
own error bound. A combination an algorithm does not support is skipped with its reason."""
import os
import sys
import unittest

try:
    import torch
except ImportError as e:  # torch is a test dependency only (python3-torch)
    print(f"skipped: torch is not importable ({e}): install python3-torch (scripts/setup --tests)")
    sys.exit(77)

import numpy as np

import convlab
from torch_oracle import (EDGE_DESCRIPTORS, PASSES, check_against_torch, output_role,
                          random_inputs, random_problems)

SEED = int(os.environ.get("CONVLAB_TEST_SEED", "20261203"))
RANDOM_PROBLEMS = 14


def cpu_algorithms():
    return [a for a in convlab.algorithms() if a.info.device == "cpu" and a.available()]


class TorchComparison(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.manual_seed(SEED)
        cls.problems = [convlab.Problem(d) for d in EDGE_DESCRIPTORS]
        cls.problems += random_problems(SEED, RANDOM_PROBLEMS)

    def compare(self, name):
        algo = convlab.algorithm(name)
        rng = np.random.default_rng(SEED)
        checked, unsupported = 0, 0
        for p in self.problems:
            for pass_ in PASSES:
                with self.subTest(algorithm=name, problem=p.descriptor, pass_=pass_, seed=SEED):
                    support = algo.supports(p, pass_)
                    if not support:
                        unsupported += 1
                        self.skipTest(f"{name} {pass_} {p.descriptor}: {support.reason}")
                    inputs = random_inputs(p, pass_, rng)
                    plan = algo.plan(p, pass_)
                    args = {r: v for r, v in inputs.items()}
                    got = plan.run(**args)
                    self.assertIs(got, inputs[output_role(pass_)], "the output given is written")
                    ok, detail = check_against_torch(plan.error_bound, p, pass_, got, inputs)
                    self.assertTrue(ok, f"{name} {pass_} {p.descriptor} (seed {SEED}): {detail}")
                    checked += 1
        print(f"\n{name}: {checked} cases agree with torch, {unsupported} unsupported "
              f"(seed {SEED})", file=sys.stderr)
        # An algorithm that supports nothing here would pass vacuously.
        self.assertGreater(checked, 0, f"{name}: no problem of the corpus was supported")


class OracleCanFail(unittest.TestCase):
    def test_one_wrong_element_fails_the_comparison(self):
        algo = convlab.algorithm("reference")
        rng = np.random.default_rng(SEED)
        for pass_ in PASSES:
            with self.subTest(pass_=pass_):
                p = convlab.Problem("g2mb2ic4ih9oc6kh3ph1sh2dh1")
                inputs = random_inputs(p, pass_, rng)
                plan = algo.plan(p, pass_)
                got = plan.run(**inputs)
                self.assertTrue(check_against_torch(plan.error_bound, p, pass_, got, inputs)[0])
                got.flat[got.size // 2] += 1e-3
                ok, detail = check_against_torch(plan.error_bound, p, pass_, got, inputs)
                self.assertFalse(ok, detail)


def add_algorithm_tests():
    names = [a.name for a in cpu_algorithms()]
    for name in names:
        method = lambda self, name=name: self.compare(name)
        setattr(TorchComparison, "test_" + name.replace(".", "_"), method)
    # A CPU algorithm this machine cannot run (oneDNN's Winograd without AVX-512) shows as
    # skipped, with the reason.
    for a in convlab.algorithms():
        if a.info.device == "cpu" and not a.available():
            reason = a.available().reason
            method = lambda self, reason=reason: self.skipTest(reason)
            setattr(TorchComparison, "test_" + a.name.replace(".", "_"), method)
    if not names:
        raise SystemExit("FAIL: no CPU algorithm is available; the reference always is")


add_algorithm_tests()

if __name__ == "__main__":
    unittest.main()
