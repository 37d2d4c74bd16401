"""Every bad array handed to Plan.run is refused with a convlab.Error (invalid_argument)
whose message names the argument and the bad value -- never a crash, a silent copy or a
wrong number -- and the plan keeps working afterwards."""
import unittest

import numpy as np

import convlab


class FakeCudaArray:
    """Anything exporting __cuda_array_interface__ (as a torch CUDA tensor does)."""

    def __init__(self, shape):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4", "data": (0, False),
                                         "version": 3}


class BadArrays(unittest.TestCase):
    def setUp(self):
        self.p = convlab.Problem("mb2ic3ih8oc4kh3ph1")
        self.algo = convlab.algorithm("cpu.im2col")
        self.plan = self.algo.plan(self.p, "fwd")
        self.x = np.ones(self.p.x_shape, np.float32)
        self.w = np.ones(self.p.w_shape, np.float32)

    def refused(self, *fragments, **arrays):
        args = {"x": self.x, "w": self.w}
        args.update(arrays)
        with self.assertRaises(convlab.Error) as e:
            self.plan.run(**args)
        self.assertEqual(e.exception.code, "invalid_argument")
        message = str(e.exception)
        for f in fragments:
            self.assertIn(f, message)
        return message

    def tearDown(self):
        y = self.plan.run(x=self.x, w=self.w)  # still works after the refusal
        self.assertEqual(y.shape, self.p.y_shape)

    def test_wrong_dtype(self):
        self.refused("x (cpu.im2col)", "dtype float64", "float32", x=self.x.astype(np.float64))
        self.refused("w (cpu.im2col)", "dtype int32", w=self.w.astype(np.int32))
        self.refused("dtype >f4", x=self.x.astype(">f4"))  # float32, but not native order

    def test_wrong_shape(self):
        bad = np.ones((2, 3, 8, 7), np.float32)
        self.refused("x (cpu.im2col)", "shape (2, 3, 8, 7)", "expected (2, 3, 8, 8)",
                     self.p.descriptor, x=bad)
        self.refused("shape (384,)", x=self.x.reshape(-1))
        self.refused("w (cpu.im2col)", "shape (3, 4, 3, 3)", w=np.ones((3, 4, 3, 3), np.float32))
        self.refused("y (cpu.im2col)", "shape (2, 4, 8, 9)", y=np.empty((2, 4, 8, 9), np.float32))

    def test_not_contiguous(self):
        wide = np.ones((2, 3, 8, 16), np.float32)
        self.refused("x (cpu.im2col)", "not C-contiguous", "numpy.ascontiguousarray(x)",
                     x=wide[..., ::2])
        self.refused("not C-contiguous", x=np.asfortranarray(self.x))
        self.refused("w (cpu.im2col)", "not C-contiguous",
                     w=np.ones((3, 3, 3, 4), np.float32).transpose(3, 2, 1, 0))

    def test_not_an_array(self):
        self.refused("x (cpu.im2col)", "got list", "numpy.ndarray", x=self.x.tolist())
        self.refused("got float", w=1.0)
        self.refused("got a CUDA array", "runs on the CPU", x=FakeCudaArray(self.p.x_shape))

    def test_missing_input(self):
        with self.assertRaises(convlab.Error) as e:
            self.plan.run(x=self.x)
        self.assertIn("reads w", str(e.exception))

    def test_read_only_or_overlapping_output(self):
        y = np.empty(self.p.y_shape, np.float32)
        y.setflags(write=False)
        self.refused("y (cpu.im2col)", "read-only", y=y)
        p = convlab.Problem("mb1ic4ih4oc4kh1")  # x and y of one shape: y could alias x
        plan = self.algo.plan(p, "fwd")
        x = np.ones(p.x_shape, np.float32)
        with self.assertRaises(convlab.Error) as e:
            plan.run(x=x, w=np.ones(p.w_shape, np.float32), y=x)
        self.assertIn("overlaps x", str(e.exception))

    def test_bad_workspace(self):
        p = convlab.Problem("mb2ic3ih8oc4kh3ph1")
        plan = self.algo.plan(p, "fwd")
        need = plan.workspace_bytes
        self.assertGreater(need, 0)
        self.refused("workspace (cpu.im2col)", f"{need - 1} bytes", f"needs {need}",
                     workspace=np.empty(need - 1, np.uint8))
        ro = np.empty(need, np.uint8)
        ro.setflags(write=False)
        self.refused("workspace", "read-only", workspace=ro)
        self.refused("workspace", "not C-contiguous", workspace=np.empty(2 * need, np.uint8)[::2])

    def test_backward_passes_check_their_roles(self):
        for pass_, good, bad_role in (("bwd_data", {"y", "w"}, "y"), ("bwd_filter", {"x", "y"}, "x")):
            with self.subTest(pass_=pass_):
                plan = self.algo.plan(self.p, pass_)
                arrays = {r: np.ones(getattr(self.p, r + "_shape"), np.float32) for r in good}
                arrays[bad_role] = arrays[bad_role][:1]
                with self.assertRaises(convlab.Error) as e:
                    plan.run(**arrays)
                self.assertIn(f"{bad_role} (cpu.im2col): shape (1,", str(e.exception))


class GpuAlgorithmsRefuseHostArrays(unittest.TestCase):
    def test_numpy_to_a_gpu_algorithm(self):
        gpu = [a for a in convlab.algorithms() if a.info.device == "gpu" and a.available()]
        if not gpu:
            self.skipTest("no GPU algorithm can run here (no CUDA device, or built without CUDA)")
        p = convlab.Problem("mb2ic3ih8oc4kh3ph1")
        plan = gpu[0].plan(p, "fwd")
        with self.assertRaises(convlab.Error) as e:
            plan.run(x=np.ones(p.x_shape, np.float32), w=np.ones(p.w_shape, np.float32),
                     y=np.ones(p.y_shape, np.float32))
        self.assertIn("runs on the GPU", str(e.exception))


if __name__ == "__main__":
    unittest.main()
