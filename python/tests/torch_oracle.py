"""torch as an independent oracle for convlab: the three passes computed by
torch.nn.functional in float64, seeded random problems, and convlab's own error bounds
(Plan.error_bound) applied to the difference, as lib/eval applies them against the
reference."""
import random

import numpy as np
import torch
import torch.nn.functional as F

import convlab

EPS = 2.0 ** -24  # float32 unit roundoff
PASSES = ("fwd", "bwd_data", "bwd_filter")


def torch_pass(p, pass_, x, w, y):
    """The pass's output in float64 from float64 torch tensors (x, w, y by role)."""
    conv = dict(stride=(p.stride_h, p.stride_w), dilation=(p.dilation_h, p.dilation_w),
                groups=p.groups)
    if (p.pad_h_end, p.pad_w_end) != (p.pad_h, p.pad_w):
        # torch pads symmetrically; an asymmetric problem is the convolution of the padded
        # input, and its gradients come from autograd through the padding.
        xp = x.clone().requires_grad_(pass_ == "bwd_data")
        wp = w.clone().requires_grad_(pass_ == "bwd_filter")
        out = F.conv2d(F.pad(xp, (p.pad_w, p.pad_w_end, p.pad_h, p.pad_h_end)), wp, **conv)
        if pass_ == "fwd":
            return out.detach()
        return torch.autograd.grad(out, xp if pass_ == "bwd_data" else wp, y)[0]
    conv["padding"] = (p.pad_h, p.pad_w)
    if pass_ == "fwd":
        return F.conv2d(x, w, **conv)
    if pass_ == "bwd_data":
        # conv_transpose2d needs the rows the forward's floor division dropped back.
        extra = tuple((size + 2 * pad - ((k - 1) * d + 1)) % s
                      for size, pad, k, d, s in ((p.h, p.pad_h, p.r, p.dilation_h, p.stride_h),
                                                 (p.w, p.pad_w, p.s, p.dilation_w, p.stride_w)))
        dx = F.conv_transpose2d(y, w, stride=conv["stride"], padding=conv["padding"],
                                output_padding=extra, groups=p.groups, dilation=conv["dilation"])
        same = torch.nn.grad.conv2d_input(p.x_shape, w, y, **conv)
        assert torch.allclose(dx, same, rtol=1e-12, atol=1e-12), "torch disagrees with itself"
        return dx
    return torch.nn.grad.conv2d_weight(x, p.w_shape, y, **conv)


def random_inputs(p, pass_, rng):
    """float32 x, w, y uniform in [-1, 1); the pass's output is NaN, so an unwritten element
    fails the comparison."""
    tensors = {}
    for role, shape in (("x", p.x_shape), ("w", p.w_shape), ("y", p.y_shape)):
        tensors[role] = rng.uniform(-1, 1, size=shape).astype(np.float32)
    out = output_role(pass_)
    tensors[out][...] = np.nan
    return tensors


def output_role(pass_):
    return {"fwd": "y", "bwd_data": "x", "bwd_filter": "w"}[pass_]


def plane_bounds(p, pass_, t):
    """Normwise bound per output plane: the sum over the reduced channel of the products of
    the input planes' 2-norms (lib/eval's formula)."""
    cpg, kpg = p.c // p.groups, p.k // p.groups
    nx = np.sqrt((t["x"].astype(np.float64) ** 2).sum(axis=(2, 3)))  # (n, c)
    nw = np.sqrt((t["w"].astype(np.float64) ** 2).sum(axis=(2, 3)))  # (k, c/g)
    ny = np.sqrt((t["y"].astype(np.float64) ** 2).sum(axis=(2, 3)))  # (n, k)
    if pass_ == "fwd":  # planes (n, k)
        out = np.zeros((p.n, p.k))
        for k in range(p.k):
            g = k // kpg
            out[:, k] = nx[:, g * cpg:(g + 1) * cpg] @ nw[k]
    elif pass_ == "bwd_data":  # planes (n, c)
        out = np.zeros((p.n, p.c))
        for c in range(p.c):
            g = c // cpg
            out[:, c] = ny[:, g * kpg:(g + 1) * kpg] @ nw[g * kpg:(g + 1) * kpg, c % cpg]
    else:  # planes (k, c/g)
        out = np.zeros((p.k, cpg))
        for k in range(p.k):
            g = k // kpg
            out[k] = ny[:, k] @ nx[:, g * cpg:(g + 1) * cpg]
    return out


def check_against_torch(bound, p, pass_, got, inputs):
    """Returns (ok, message): `got` (a plan's float32 output) against torch in float64 under
    `bound` (the plan's error_bound)."""
    as64 = {r: torch.from_numpy(v.astype(np.float64)) for r, v in inputs.items()}
    out = output_role(pass_)
    exact = torch_pass(p, pass_, as64["x"], as64["w"], as64["y"]).numpy()
    if exact.shape != got.shape:
        return False, f"torch gives shape {exact.shape}, convlab {got.shape}"
    if not np.all(np.isfinite(got)):
        return False, f"{np.count_nonzero(~np.isfinite(got))} non-finite outputs"
    err = np.abs(got.astype(np.float64) - exact)
    if bound.kind == "elementwise":
        mags = {r: torch.abs(v) for r, v in as64.items()}
        mags[out] = as64[out]  # the output role is not read
        a_sum = torch_pass(p, pass_, mags["x"], mags["w"], mags["y"]).numpy()
        allowed = bound.factor * EPS * a_sum
        ratio = np.where(allowed > 0, err / np.where(allowed > 0, allowed, 1),
                         np.where(err > 0, np.inf, 0))
    else:
        planes = err.reshape(err.shape[0], err.shape[1], -1)
        plane_err = np.sqrt((planes ** 2).sum(axis=2))
        allowed = bound.factor * EPS * max(bound.log2_size, 1.0) * plane_bounds(p, pass_, inputs)
        ratio = np.where(allowed > 0, plane_err / np.where(allowed > 0, allowed, 1),
                         np.where(plane_err > 0, np.inf, 0))
    worst = float(ratio.max())
    return worst <= 1.0, (f"max abs err {err.max():.3g}, worst error/bound {worst:.3g} under "
                          f"{bound.describe()}")


def random_problems(seed, count):
    """Seeded random valid problems over batch, groups, channels, sizes, kernel, stride,
    padding and dilation (small: the reference and torch run each in milliseconds)."""
    rng = random.Random(seed)
    problems = []
    while len(problems) < count:
        g = rng.choice([1, 1, 2, 3])
        fields = dict(n=rng.randint(1, 3), c=g * rng.randint(1, 4), k=g * rng.randint(1, 4),
                      h=rng.randint(3, 13), w=rng.randint(3, 13), r=rng.randint(1, 5),
                      s=rng.randint(1, 5), pad_h=rng.randint(0, 2), pad_w=rng.randint(0, 2),
                      stride_h=rng.randint(1, 3), stride_w=rng.randint(1, 3),
                      dilation_h=rng.choice([1, 1, 2]), dilation_w=rng.choice([1, 1, 2]),
                      groups=g)
        try:
            problems.append(convlab.Problem(**fields))
        except convlab.Error:
            continue  # kernel larger than the padded input: draw again
    return problems


# Shapes every strategy must get right, beside the random ones: 1x1, kernel = padded input,
# stride > kernel, asymmetric padding (benchdnn deduces it from oh), depthwise groups, and a
# stride-1 3x3 layer with 16 channels, the shape Winograd implementations take.
EDGE_DESCRIPTORS = (
    "mb2ic16ih10oc16kh3ph1",
    "mb2ic4ih7oc5kh1",
    "mb1ic3ih5oc2kh7ph1",
    "mb2ic2ih11oc3kh2sh3",
    "mb1ic2ih8oc3oh4kh3sh2",
    "g4mb2ic4ih9oc4kh3ph1",
    "mb1ic3ih6iw9oc2kh3kw2dh1",
)
