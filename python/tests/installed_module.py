"""The installed module imports from PREFIX alone and runs a forward convolution.

    PYTHONPATH=PREFIX/lib/python3.X/site-packages python3 installed_module.py PREFIX
"""
import os
import sys

import numpy as np

import convlab

prefix = os.path.realpath(sys.argv[1])
where = os.path.realpath(convlab.__file__)
if not where.startswith(prefix + os.sep):
    sys.exit(f"FAIL: convlab was imported from {where}, not from the prefix {prefix}")
p = convlab.Problem("mb2ic3ih6oc4kh3")
y = convlab.algorithm("cpu.im2col").plan(p, "fwd").run(
    x=np.ones(p.x_shape, np.float32), w=np.ones(p.w_shape, np.float32))
if not np.all(y == 27):
    sys.exit(f"FAIL: expected every output to be 27 (3 channels x 3 x 3 taps), got {y.ravel()[:4]}")
print(f"installed module {where}: ok")
