"""GPU algorithms on torch CUDA tensors through __cuda_array_interface__: the output tensor
is written in place (no copy), results agree with torch.nn.functional under each algorithm's
error bound, and host or non-contiguous tensors are refused by name. Needs a CUDA device,
a build with CUDA and a torch with CUDA; otherwise skipped with the reason."""
import sys
import unittest


def skip(reason):
    print(f"skipped: {reason}")
    sys.exit(77)


try:
    import torch
except ImportError as e:
    skip(f"torch is not importable ({e}): install python3-torch (scripts/setup --tests)")

import numpy as np

import convlab
from torch_oracle import (EDGE_DESCRIPTORS, PASSES, check_against_torch, output_role,
                          random_inputs, random_problems)

if not convlab.built_with_cuda:
    skip("convlab was built without CUDA: no GPU algorithm to run on CUDA tensors")
GPU = [a for a in convlab.algorithms() if a.info.device == "gpu"]
if not any(a.available() for a in GPU):
    skip("no GPU algorithm can run here: " + (GPU[0].available().reason if GPU else "none built"))
if not torch.cuda.is_available():
    skip("this torch has no CUDA device (Debian's python3-torch is built without CUDA)")

SEED = 20261203


class CudaTensors(unittest.TestCase):
    def test_every_gpu_algorithm_on_cuda_tensors(self):
        problems = [convlab.Problem(d) for d in EDGE_DESCRIPTORS] + random_problems(SEED, 6)
        rng = np.random.default_rng(SEED)
        for algo in (a for a in GPU if a.available()):
            for p in problems:
                for pass_ in PASSES:
                    with self.subTest(algorithm=algo.name, problem=p.descriptor, pass_=pass_):
                        if not algo.supports(p, pass_):
                            self.skipTest(algo.supports(p, pass_).reason)
                        inputs = random_inputs(p, pass_, rng)
                        on_gpu = {r: torch.from_numpy(v).cuda() for r, v in inputs.items()}
                        out = on_gpu[output_role(pass_)]
                        address = out.data_ptr()
                        plan = algo.plan(p, pass_)
                        got = plan.run(**on_gpu)
                        self.assertIs(got, out)  # written in place: no copy
                        self.assertEqual(got.data_ptr(), address)
                        torch.cuda.synchronize()
                        ok, detail = check_against_torch(plan.error_bound, p, pass_,
                                                         got.cpu().numpy(), inputs)
                        self.assertTrue(ok, f"{algo.name} {pass_} {p.descriptor}: {detail}")

    def test_explicit_stream_and_workspace(self):
        algo = next(a for a in GPU if a.available())
        p = convlab.Problem("mb2ic8ih16oc8kh3ph1")
        plan = algo.plan(p, "fwd")
        x = torch.randn(p.x_shape, device="cuda")
        w = torch.randn(p.w_shape, device="cuda")
        y = torch.empty(p.y_shape, device="cuda")
        ws = torch.empty(max(plan.workspace_bytes, 1), dtype=torch.uint8, device="cuda")
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            plan.run(x=x, w=w, y=y, workspace=ws, stream=stream.cuda_stream)
        stream.synchronize()
        expected = torch.nn.functional.conv2d(x.double(), w.double(), padding=1)
        self.assertLess(float((y.double() - expected).abs().max()), 1e-3)

    def test_host_and_strided_tensors_are_refused(self):
        algo = next(a for a in GPU if a.available())
        p = convlab.Problem("mb2ic3ih8oc4kh3ph1")
        plan = algo.plan(p, "fwd")
        x = torch.ones(p.x_shape, device="cuda")
        w = torch.ones(p.w_shape, device="cuda")
        y = torch.empty(p.y_shape, device="cuda")
        with self.assertRaises(convlab.Error) as e:
            plan.run(x=x.cpu(), w=w, y=y)
        self.assertIn("runs on the GPU", str(e.exception))
        wide = torch.ones((2, 3, 8, 16), device="cuda")
        with self.assertRaises(convlab.Error) as e:
            plan.run(x=wide[..., ::2], w=w, y=y)
        self.assertIn("not C-contiguous", str(e.exception))
        with self.assertRaises(convlab.Error) as e:
            plan.run(x=x.double(), w=w, y=y)
        self.assertIn("typestr '<f8'", str(e.exception))
        with self.assertRaises(convlab.Error) as e:
            plan.run(x=x, w=w)
        self.assertIn("pass the output y", str(e.exception))


if __name__ == "__main__":
    unittest.main()
