"""Memory formats through nn ops against PyTorch: a channels-last (NHWC / NDHWC) input or
weight gives convolutions, poolings and normalisations channels-last outputs and gradients;
compared are values, exact strides and is_contiguous in each format, of outputs (and pooling
indices) and of the gradients autograd.grad returns."""
import numpy as np
import pytest

from differential import same

FORMATS = {4: "channels_last", 5: "channels_last_3d"}


def _array(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


def make(T, shape, fmt=False, dtype="float64", seed=0, grad=True):
    """A tensor of fixed random values; `fmt` True lays it out channels-last (by its rank),
    a callable rearranges it (slices, permutations)."""
    t = T.tensor(_array(shape, seed), dtype=getattr(T, dtype))
    if fmt is True:
        t = t.to(memory_format=getattr(T, FORMATS[len(shape)]))
    elif fmt:
        t = fmt(t)
    return t.requires_grad_(grad) if grad else t


def layout(T, t):
    return (t.stride(), t.is_contiguous(), t.is_contiguous(memory_format=T.channels_last),
            t.is_contiguous(memory_format=T.channels_last_3d))


def observe(T, fn, inputs, grad_fmt=False):
    """fn's outputs and the gradients of its first output (by every input that requires one,
    for a fixed grad_output, itself channels-last when `grad_fmt`): values and layouts."""
    out = fn(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    seen = [(o, layout(T, o)) for o in outs]
    y = outs[0]
    if y.requires_grad:
        g = make(T, tuple(y.shape), grad_fmt, str(y.dtype).split(".")[-1], seed=99, grad=False)
        wrt = [t for t in inputs if isinstance(t, T.Tensor) and t.requires_grad]
        grads = T.autograd.grad(y, wrt, g, allow_unused=True)
        seen += [None if gr is None else (gr, layout(T, gr)) for gr in grads]
    return seen


def check(fn, *specs, grad_fmt=False, rtol=1e-5, atol=1e-6):
    """Compare `fn` on tensors made from `specs` (make's arguments after T) under both."""
    same(lambda T: observe(T, lambda *a: fn(T, *a), [make(T, *s) for s in specs], grad_fmt),
         rtol=rtol, atol=atol)


# ============================================================================ convolutions
# (kind, options, weight shape from (d, in channels)); in channels 4 throughout
_CONV_KINDS = {
    "plain": ({}, lambda d: (3, 4) + (2,) * d),
    "strided": ({"stride": 2, "padding": 1}, lambda d: (3, 4) + (3,) * d),
    "dilated": ({"dilation": 2}, lambda d: (3, 4) + (2,) * d),
    "grouped": ({"groups": 2}, lambda d: (6, 2) + (2,) * d),
    "depthwise": ({"groups": 4}, lambda d: (4, 1) + (2,) * d),
    "pointwise": ({}, lambda d: (3, 4) + (1,) * d),
    "one_out": ({}, lambda d: (1, 4) + (2,) * d),
    "big_kernel": ({"padding": 2}, lambda d: (3, 4) + (4,) * d),
}
_TRANSPOSED_KINDS = {
    "plain": ({}, lambda d: (4, 3) + (2,) * d),
    "strided": ({"stride": 2, "padding": 1, "output_padding": 1}, lambda d: (4, 3) + (3,) * d),
    "dilated": ({"dilation": 2}, lambda d: (4, 3) + (2,) * d),
    "grouped": ({"groups": 2}, lambda d: (4, 2) + (2,) * d),
    # output padding as large as the stride (allowed below the dilation)
    "padding_past_stride": ({"dilation": 2, "output_padding": 1}, lambda d: (4, 3) + (2,) * d),
}
_LAYOUTS = {"input": (True, False), "weight": (False, True), "both": (True, True),
            "neither": (False, False)}


def _conv_case(transposed, kind, d, batch, where, dtype, bias=False):
    options, wshape = (_TRANSPOSED_KINDS if transposed else _CONV_KINDS)[kind]
    name = f"conv_transpose{d}d" if transposed else f"conv{d}d"
    x_fmt, w_fmt = _LAYOUTS[where]
    specs = [((batch, 4) + (5,) * d, x_fmt, dtype, 1), (wshape(d), w_fmt, dtype, 2)]
    if bias:
        out_channels = wshape(d)[1] * options.get("groups", 1) if transposed else wshape(d)[0]
        specs.append(((out_channels,), False, dtype, 3))
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else {}
    check(lambda T, *a: getattr(T.nn.functional, name)(*a, **options), *specs, **tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("where", list(_LAYOUTS))
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("kind", list(_CONV_KINDS))
def test_conv(kind, d, where, batch, dtype):
    _conv_case(False, kind, d, batch, where, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("where", list(_LAYOUTS))
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("kind", list(_TRANSPOSED_KINDS))
def test_conv_transpose(kind, d, where, batch, dtype):
    _conv_case(True, kind, d, batch, where, dtype)


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("transposed", [False, True])
def test_conv_bias(transposed, d):
    _conv_case(transposed, "plain", d, 2, "input", "float32", bias=True)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("where", ["input", "weight"])
def test_conv_half(where, d, dtype):
    x_fmt, w_fmt = _LAYOUTS[where]
    same(lambda T: [layout(T, getattr(T.nn.functional, f"conv{d}d")(
        make(T, (2, 4) + (5,) * d, x_fmt, dtype, 1), make(T, (3, 4) + (2,) * d, w_fmt, dtype, 2)))])


def _nhwc_slice(t):
    return t.to(memory_format=_fmt_of(t))[:, :, 1:, ::2]


def _fmt_of(t):
    import torch
    import ember
    T = torch if isinstance(t, torch.Tensor) else ember
    return getattr(T, FORMATS[t.dim()])


# inputs whose layout is ambiguous or not dense: PyTorch decides by the order of the strides
_ODD_INPUTS = {
    "one_channel": ((2, 1, 5, 5), True),
    "one_pixel": ((2, 4, 1, 1), True),
    "one_sample_one_pixel": ((1, 4, 1, 1), True),
    "one_row": ((2, 4, 1, 5), True),
    "one_column": ((2, 4, 5, 1), True),
    "sliced_nhwc": ((2, 4, 6, 6), _nhwc_slice),
    "permuted": ((2, 5, 5, 4), lambda t: t.permute(0, 3, 1, 2)),
    "transposed_hw": ((2, 4, 5, 6), lambda t: t.transpose(2, 3)),
    "channel_outermost": ((4, 2, 5, 5), lambda t: t.transpose(0, 1)),
    "expanded_channel": ((2, 1, 5, 5), lambda t: t.to(memory_format=_fmt_of(t)).expand(2, 4, 5, 5)),
    "one_channel_3d": ((2, 1, 4, 4, 4), True),
    "one_pixel_3d": ((2, 4, 1, 1, 1), True),
    "one_sample_one_pixel_3d": ((1, 4, 1, 1, 1), True),
    "sliced_ndhwc": ((2, 4, 5, 6, 6), _nhwc_slice),
    "permuted_3d": ((2, 4, 5, 5, 4), lambda t: t.permute(0, 4, 1, 2, 3)),
}


@pytest.mark.parametrize("name", list(_ODD_INPUTS))
def test_conv_odd_inputs(name):
    shape, fmt = _ODD_INPUTS[name]
    conv = "conv2d" if len(shape) == 4 else "conv3d"

    def run(T):
        x = make(T, shape, fmt, "float32", 1)
        channels = x.shape[1]
        w = make(T, (3, channels) + (1,) * (x.dim() - 2), False, "float32", 2)
        return observe(T, lambda a, b: getattr(T.nn.functional, conv)(a, b), [x, w])
    same(run, rtol=1e-4, atol=1e-4)


# weights whose layout is ambiguous: one input channel, a 1x1 kernel, one output channel
@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("where", ["input", "weight", "both"])
@pytest.mark.parametrize("wshape,groups", [((4, 1, 2, 2), 4), ((4, 3, 1, 1), 1),
                                           ((4, 1, 2, 2), 1), ((1, 3, 2, 2), 1),
                                           ((1, 1, 1, 1), 1), ((4, 1, 1, 1), 4)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv_odd_weights(dtype, wshape, groups, where, batch):
    x_fmt, w_fmt = _LAYOUTS[where]
    check(lambda T, x, w: T.nn.functional.conv2d(x, w, groups=groups),
          ((batch, wshape[1] * groups, 5, 5), x_fmt, dtype, 1), (wshape, w_fmt, dtype, 2),
          rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("d", [2, 3])
def test_conv_grad_output_channels_last(d):
    # a channels-last gradient into a contiguous convolution: the gradients stay contiguous
    check(lambda T, x, w: getattr(T.nn.functional, f"conv{d}d")(x, w),
          ((2, 4) + (5,) * d, False, "float32", 1), ((3, 4) + (2,) * d, False, "float32", 2),
          grad_fmt=True, rtol=1e-4, atol=1e-4)


def test_conv1d_and_unbatched():
    check(lambda T, x, w: T.nn.functional.conv1d(x, w),
          ((2, 5, 4), lambda t: t.transpose(1, 2), "float64", 1), ((3, 4, 2), False))
    # an unbatched NHWC-ordered (C, H, W) input: 3 dims are never channels-last
    check(lambda T, x, w: T.nn.functional.conv2d(x, w),
          ((5, 5, 4), lambda t: t.permute(2, 0, 1), "float64", 1), ((3, 4, 2, 2), False))


def test_conv_double_backward():
    def run(T):
        x = make(T, (2, 4, 5, 5), True, "float64", 1)
        w = make(T, (3, 4, 2, 2), False, "float64", 2)
        y = T.nn.functional.conv2d(x, w)
        gx, gw = T.autograd.grad(y.pow(2).sum(), (x, w), create_graph=True)
        ggx, ggw = T.autograd.grad((gx.pow(2).sum() + gw.pow(2).sum()), (x, w))
        # (ggw's layout is not compared: torch's double-backward formula leaves its weight
        # gradient transposed, (4, 12, 2, 1) here)
        return [(t, layout(T, t)) for t in (gx, gw, ggx)] + [ggw]
    same(run)


def test_conv_module_grad():
    # .grad of a channels-last module's weight and of its input
    def run(T):
        conv = T.nn.Conv2d(4, 3, 3, padding=1).double()
        conv.weight = T.nn.Parameter(make(T, (3, 4, 3, 3), True, grad=False))
        conv.bias = T.nn.Parameter(make(T, (3,), False, grad=False))
        x = make(T, (2, 4, 5, 5), True, seed=1)
        y = conv(x)
        y.sum().backward()
        return [(t, layout(T, t)) for t in (y, x.grad, conv.weight.grad, conv.bias.grad)]
    same(run)


# ============================================================================ poolings
def _pool(name, *args, **kwargs):
    return lambda T, x: getattr(T.nn.functional, name)(x, *args, **kwargs)


_POOLS = {
    "max": lambda d: _pool(f"max_pool{d}d", 2),
    "max_indices": lambda d: _pool(f"max_pool{d}d", 2, return_indices=True),
    "max_padded": lambda d: _pool(f"max_pool{d}d", 3, 2, 1, ceil_mode=True,
                                  return_indices=True),
    "max_dilated": lambda d: _pool(f"max_pool{d}d", 2, 1, 0, 2),
    "avg": lambda d: _pool(f"avg_pool{d}d", 2),
    "avg_padded": lambda d: _pool(f"avg_pool{d}d", 3, 2, 1, ceil_mode=True,
                                  count_include_pad=False),
    "avg_divisor": lambda d: _pool(f"avg_pool{d}d", 2, divisor_override=3),
    "adaptive_avg": lambda d: _pool(f"adaptive_avg_pool{d}d", 3),
    "adaptive_avg_one": lambda d: _pool(f"adaptive_avg_pool{d}d", 1),
    "adaptive_avg_same": lambda d: _pool(f"adaptive_avg_pool{d}d", 5),
    "adaptive_max": lambda d: _pool(f"adaptive_max_pool{d}d", 3, return_indices=True),
    "adaptive_max_one": lambda d: _pool(f"adaptive_max_pool{d}d", 1, return_indices=True),
    "lp": lambda d: _pool(f"lp_pool{d}d", 2, 2),
    "fractional": lambda d: lambda T, x: getattr(T.nn.functional, f"fractional_max_pool{d}d")(
        x, 2, output_size=3, _random_samples=T.full((2, 3, d), 0.5, dtype=x.dtype)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("where", ["input", "grad_output", "neither"])
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("name", list(_POOLS))
def test_pool(name, d, where, dtype):
    check(_POOLS[name](d), ((2, 3) + (5,) * d, where == "input", dtype, 1),
          grad_fmt=where == "grad_output")


@pytest.mark.parametrize("name", ["max_indices", "avg", "adaptive_avg", "adaptive_max"])
def test_pool_bfloat16(name):
    check(_POOLS[name](2), ((2, 3, 5, 5), True, "bfloat16", 1), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("pool", ["max_pool", "avg_pool", "adaptive_avg_pool",
                                  "adaptive_max_pool"])
@pytest.mark.parametrize("name", list(_ODD_INPUTS))
def test_pool_odd_inputs(name, pool):
    shape, fmt = _ODD_INPUTS[name]
    d = len(shape) - 2
    size = 1 if "adaptive" in pool else (1,) * d
    check(_pool(f"{pool}{d}d", size), (shape, fmt, "float64", 1))


def test_pool_1d_and_unbatched():
    # 1-d poolings of an (N, L, C)-ordered input, and unbatched NHWC-ordered inputs
    nlc = ((2, 5, 4), lambda t: t.transpose(1, 2))
    for op in (_pool("max_pool1d", 2), _pool("max_pool1d", 2, return_indices=True),
               _pool("avg_pool1d", 2), _pool("adaptive_avg_pool1d", 3),
               _pool("adaptive_max_pool1d", 3)):
        check(op, nlc)
    hwc = ((5, 5, 4), lambda t: t.permute(2, 0, 1))
    for op in (_pool("max_pool2d", 2, return_indices=True), _pool("avg_pool2d", 2),
               _pool("adaptive_avg_pool2d", 3), _pool("adaptive_max_pool2d", 3)):
        check(op, hwc)


def test_pool_double_backward():
    def run(T):
        x = make(T, (2, 3, 6, 6), True)
        out = []
        for op in (_POOLS["max"](2), _POOLS["avg"](2), _POOLS["adaptive_avg"](2)):
            g, = T.autograd.grad(op(T, x).pow(2).sum(), x, create_graph=True)
            gg, = T.autograd.grad(g.pow(2).sum(), x)
            out += [(g, layout(T, g)), (gg, layout(T, gg))]
        return out
    same(run)


# ============================================================================ normalisations
_NORMS = {
    "batch_norm": lambda T, x: T.nn.functional.batch_norm(x, None, None, training=True),
    "batch_norm_affine": lambda T, x, w, b: T.nn.functional.batch_norm(
        x, None, None, w, b, training=True),
    "batch_norm_eval": lambda T, x: T.nn.functional.batch_norm(
        x, T.zeros(3, dtype=x.dtype), T.ones(3, dtype=x.dtype), training=False),
    "group_norm": lambda T, x: T.nn.functional.group_norm(x, 1),
    "group_norm_affine": lambda T, x, w, b: T.nn.functional.group_norm(x, 3, w, b),
    "instance_norm": lambda T, x: T.nn.functional.instance_norm(x),
    "instance_norm_affine": lambda T, x, w, b: T.nn.functional.instance_norm(x, weight=w, bias=b),
    "layer_norm": lambda T, x: T.nn.functional.layer_norm(x, x.shape[1:]),
    "layer_norm_last": lambda T, x, w, b: T.nn.functional.layer_norm(x, x.shape[-1:], w, b),
}


@pytest.mark.parametrize("where", ["input", "grad_output"])
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("name", list(_NORMS))
def test_norm(name, d, where):
    shape = (2, 3) + (4,) * d
    specs = [(shape, where == "input", "float64", 1)]
    if name.endswith("affine"):
        specs += [((3,), False, "float64", 2), ((3,), False, "float64", 3)]
    elif name == "layer_norm_last":
        specs += [((4,), False, "float64", 2), ((4,), False, "float64", 3)]
    check(_NORMS[name], *specs, grad_fmt=where == "grad_output")


@pytest.mark.parametrize("name", ["batch_norm", "group_norm_affine", "layer_norm"])
@pytest.mark.parametrize("odd", ["one_pixel", "sliced_nhwc", "permuted", "channel_outermost"])
def test_norm_odd_inputs(odd, name):
    shape, fmt = _ODD_INPUTS[odd]
    channels = shape[1] if odd != "permuted" else shape[3]
    channels = shape[0] if odd == "channel_outermost" else channels
    fn = {"batch_norm": _NORMS["batch_norm"], "layer_norm": _NORMS["layer_norm"],
          "group_norm_affine": lambda T, x, w, b: T.nn.functional.group_norm(x, 2, w, b)}[name]
    specs = [(shape, fmt, "float64", 1)]
    if name == "group_norm_affine":
        specs += [((channels,), False, "float64", 2), ((channels,), False, "float64", 3)]
    check(fn, *specs)


def test_norm_modules():
    def run(T):
        out = []
        x = make(T, (2, 4, 3, 3), True, seed=1)
        for m in (T.nn.BatchNorm2d(4).double(), T.nn.GroupNorm(2, 4).double()):
            y = m(x)
            y.pow(2).sum().backward()
            out += [(y, layout(T, y)), (x.grad, layout(T, x.grad)), m.weight.grad]
            x.grad = None
        return out
    same(run)


# ============================================================================ layout heuristic
def _random_layout(seed):
    """(shape, rearrangement) of a random 4-d or 5-d layout: dims of sizes 1 to 3 stored in a
    random order, maybe narrowed, maybe expanded along a unit dim, maybe strided."""
    rng = np.random.default_rng(seed)
    nd = int(rng.choice([4, 5]))
    shape = [int(rng.choice([1, 1, 2, 3])) for _ in range(nd)]
    perm = [int(p) for p in rng.permutation(nd)]
    narrow = int(rng.integers(nd)) if rng.random() < 0.3 else None
    expand = int(rng.integers(nd)) if rng.random() < 0.2 else None
    step = int(rng.integers(nd)) if rng.random() < 0.2 else None

    def arrange(t):
        t = t.permute([perm.index(i) for i in range(nd)])
        if narrow is not None:
            t = t.narrow(narrow, 0, max(1, t.shape[narrow] - 1))
        if expand is not None and t.shape[expand] == 1:
            t = t.expand(*[3 if i == expand else n for i, n in enumerate(t.shape)])
        if step is not None:
            t = t[(slice(None),) * step + (slice(None, None, 2),)]
        return t
    return tuple(shape[p] for p in perm), arrange


@pytest.mark.parametrize("seed", range(60))
def test_suggested_format_of_random_layouts(seed):
    # which layouts PyTorch takes to be channels-last, as a max pooling's output shows
    shape, arrange = _random_layout(seed)

    def run(T):
        x = make(T, shape, arrange, grad=False)
        y = getattr(T.nn.functional, f"max_pool{x.dim() - 2}d")(x, 1)
        return [x.stride(), layout(T, y), layout(T, T.nn.functional.avg_pool2d(x, 1))
                if x.dim() == 4 else None]
    same(run)
