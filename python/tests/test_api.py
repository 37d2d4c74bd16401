"""The module's API: the registry as Python sees it (AlgorithmInfo fields), problems from
descriptors and from fields, planning with the workspace query and plan info, knobs, runs
on NumPy arrays, and convlab's errors as convlab.Error with their codes."""
import threading
import unittest

import numpy as np

import convlab

FAMILIES = {"reference", "direct", "gemm", "fft", "fft_tiled", "winograd", "vendor"}


class Registry(unittest.TestCase):
    def test_every_algorithm_describes_itself(self):
        algos = convlab.algorithms()
        names = [a.name for a in algos]
        self.assertIn("reference", names)
        self.assertEqual(len(names), len(set(names)))
        for a in algos:
            info = a.info
            self.assertEqual(info.name, a.name)
            self.assertIn(info.device, {"cpu", "gpu"})
            self.assertIn(info.family, FAMILIES)
            self.assertIsInstance(info.backend, str)
            self.assertTrue(info.backend, a.name)
            self.assertIsInstance(info.deterministic, bool)
            self.assertIn(info.math_mode, {"fp32", "tf32"})
            for knob in info.knobs:
                self.assertIn(knob.type, {"integer", "boolean", "choice", "bytes"})
                self.assertTrue(knob.name)
            available = a.available()
            self.assertEqual(bool(available), available.ok)
            if not available:
                self.assertTrue(available.reason, f"{a.name} unavailable without a reason")

    def test_globs_select_and_unknown_names_are_named(self):
        cpu = convlab.algorithms("cpu.*")
        self.assertTrue(cpu)
        self.assertTrue(all(a.name.startswith("cpu.") for a in cpu))
        with self.assertRaises(convlab.Error) as e:
            convlab.algorithm("cpu.nonesuch")
        self.assertEqual(e.exception.code, "invalid_argument")
        self.assertIn("cpu.nonesuch", str(e.exception))
        self.assertIn("reference", str(e.exception))  # it lists the known names
        with self.assertRaises(convlab.Error) as e:
            convlab.algorithms("nonesuch.*")
        self.assertIn("nonesuch.*", str(e.exception))

    def test_missing_algorithms_say_why(self):
        for name, reason in convlab.missing():
            self.assertTrue(name)
            self.assertTrue(reason, name)

    def test_error_is_a_runtime_error(self):
        self.assertTrue(issubclass(convlab.Error, RuntimeError))

    def test_threads(self):
        self.assertGreaterEqual(convlab.num_threads(), 1)
        with self.assertRaises(convlab.Error) as e:
            convlab.set_num_threads(0)
        self.assertEqual(e.exception.code, "invalid_argument")


class Problems(unittest.TestCase):
    def test_descriptor_fields_and_shapes(self):
        p = convlab.Problem("g2mb4ic8ih10iw12oc6kh3kw5sh2sw1ph1pw2dh1dw0")
        self.assertEqual((p.n, p.c, p.h, p.w, p.k, p.r, p.s), (4, 8, 10, 12, 6, 3, 5))
        self.assertEqual((p.stride_h, p.stride_w, p.pad_h, p.pad_w), (2, 1, 1, 2))
        self.assertEqual((p.dilation_h, p.dilation_w), (2, 1))  # benchdnn's dh1 = ours 2
        self.assertEqual(p.groups, 2)
        self.assertEqual(p.out_h, (10 + 2 - 5) // 2 + 1)
        self.assertEqual(p.out_w, 12 + 4 - 5 + 1)
        self.assertEqual(p.x_shape, (4, 8, 10, 12))
        self.assertEqual(p.w_shape, (6, 4, 3, 5))
        self.assertEqual(p.y_shape, (4, 6, p.out_h, p.out_w))
        self.assertEqual(convlab.Problem(p.descriptor), p)
        self.assertEqual(p.flops("fwd"), 2 * 4 * 6 * p.out_h * p.out_w * 4 * 3 * 5)

    def test_fields_as_torch_takes_them(self):
        p = convlab.Problem(n=2, c=3, h=8, w=8, k=4, r=3, s=3, pad_h=1, pad_w=1, dilation_h=2,
                            dilation_w=2)
        self.assertEqual(p, convlab.Problem("mb2ic3ih8oc4kh3ph1dh1"))

    def test_invalid_problems_name_the_values(self):
        with self.assertRaises(convlab.Error) as e:
            convlab.Problem("mb1ic3ih5oc8kh7")
        self.assertEqual(e.exception.code, "invalid_problem")
        self.assertIn("kernel 7", str(e.exception))
        with self.assertRaises(convlab.Error) as e:
            convlab.Problem(n=1, c=3, h=5, w=5, k=4, r=3, s=3, groups=2)
        self.assertEqual(e.exception.code, "invalid_problem")
        with self.assertRaises(convlab.Error) as e:
            convlab.Problem("mb1ic3ihXoc8kh3")
        self.assertEqual(e.exception.code, "invalid_argument")
        self.assertIn("mb1ic3ihXoc8kh3", str(e.exception))


class Planning(unittest.TestCase):
    p = convlab.Problem("mb2ic3ih8oc4kh3ph1")

    def test_plan_reports_workspace_and_what_it_chose(self):
        for a in convlab.algorithms("cpu.*,reference"):
            for pass_ in convlab.passes():
                with self.subTest(algorithm=a.name, pass_=pass_):
                    if not a.supports(self.p, pass_):
                        self.skipTest(a.supports(self.p, pass_).reason)
                    plan = a.plan(self.p, pass_)
                    self.assertEqual(plan.problem, self.p)
                    self.assertEqual(plan.pass_, pass_)
                    self.assertEqual(plan.algorithm.name, a.name)
                    self.assertIsInstance(plan.workspace_bytes, int)
                    info = plan.info
                    if info.workspace_split:  # optional per algorithm; when given, whole
                        self.assertEqual(sum(b for _, b in info.workspace_split),
                                         plan.workspace_bytes)
                    self.assertEqual(set(info.knobs), {k.name for k in a.info.knobs})
                    self.assertIn(a.name, repr(plan))

    def test_a_descriptor_string_stands_for_a_problem(self):
        plan = convlab.algorithm("reference").plan("mb2ic3ih8oc4kh3ph1", "bwd_data")
        self.assertEqual(plan.problem, self.p)

    def test_bad_pass_and_knob_are_named(self):
        algo = convlab.algorithm("cpu.im2col")
        with self.assertRaises(convlab.Error) as e:
            algo.plan(self.p, "forward")
        self.assertIn("forward", str(e.exception))
        with self.assertRaises(convlab.Error) as e:
            algo.plan(self.p, "fwd", knobs={"no_such_knob": 3})
        self.assertEqual(e.exception.code, "invalid_argument")
        self.assertIn("no_such_knob", str(e.exception))

    def test_unavailable_algorithms_refuse_to_plan_with_the_reason(self):
        for a in convlab.algorithms():
            if a.available():
                continue
            with self.subTest(algorithm=a.name):
                with self.assertRaises(convlab.Error) as e:
                    a.plan(self.p, "fwd")
                self.assertEqual(e.exception.code, "unavailable")
                self.assertIn(a.available().reason, str(e.exception))


class Running(unittest.TestCase):
    p = convlab.Problem("mb2ic3ih6oc4kh3")  # no padding: every output sums 27 products

    def test_forward_allocates_or_fills_the_output(self):
        plan = convlab.algorithm("cpu.im2col").plan(self.p, "fwd")
        x = np.ones(self.p.x_shape, np.float32)
        w = np.full(self.p.w_shape, 0.5, np.float32)
        y = plan.run(x=x, w=w)
        self.assertEqual(y.shape, self.p.y_shape)
        self.assertEqual(y.dtype, np.float32)
        np.testing.assert_array_equal(y, 27 * 0.5)
        given = np.full(self.p.y_shape, np.nan, np.float32)
        self.assertIs(plan.run(x=x, w=w, y=given), given)
        np.testing.assert_array_equal(given, 27 * 0.5)

    def test_workspace_given_or_allocated_gives_the_same_result(self):
        algo = convlab.algorithm("cpu.im2col")
        plan = algo.plan(self.p, "bwd_filter")
        rng = np.random.default_rng(7)
        x = rng.standard_normal(self.p.x_shape).astype(np.float32)
        dy = rng.standard_normal(self.p.y_shape).astype(np.float32)
        ws = np.empty(max(plan.workspace_bytes, 1), np.uint8)
        own = plan.run(x=x, y=dy)
        given = plan.run(x=x, y=dy, workspace=ws)
        np.testing.assert_array_equal(own, given)

    def test_threads_may_share_a_plan(self):
        # run releases the GIL; threads sharing one plan must still each get their answer.
        p = convlab.Problem("mb2ic8ih12oc8kh3ph1")
        plan = convlab.algorithm("cpu.im2col").plan(p, "fwd")
        reference = convlab.algorithm("reference").plan(p, "fwd")
        rng = np.random.default_rng(11)
        cases = [(rng.standard_normal(p.x_shape).astype(np.float32),
                  rng.standard_normal(p.w_shape).astype(np.float32)) for _ in range(8)]
        results = [None] * len(cases)

        def work(i):
            for _ in range(5):
                results[i] = plan.run(x=cases[i][0], w=cases[i][1])

        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(cases))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for (x, w), got in zip(cases, results):
            np.testing.assert_allclose(got, reference.run(x=x, w=w), rtol=1e-4, atol=1e-4)

    def test_inputs_are_not_written(self):
        plan = convlab.algorithm("reference").plan(self.p, "bwd_data")
        dy = np.ones(self.p.y_shape, np.float32)
        w = np.ones(self.p.w_shape, np.float32)
        dy.setflags(write=False)
        w.setflags(write=False)  # read-only inputs are fine: they are only read
        dx = plan.run(y=dy, w=w)
        self.assertEqual(dx.shape, self.p.x_shape)


if __name__ == "__main__":
    unittest.main()
