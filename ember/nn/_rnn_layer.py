"""One LSTM layer over a whole sequence as one graph node: PyTorch's float32 CPU path.

For float32 input (without projections, not packed) PyTorch's nn.LSTM runs each layer and
direction as one oneDNN op and records one node for it, MkldnnRnnLayerBackward0, whose backward
runs back-propagation through time inside. This is ours: the forward loops over the time steps
in NumPy (the input's product with W_ih for all steps as one GEMM before the loop), keeping
the gate activations and cell states in a workspace; the backward walks the steps back with
a few vectorised calls per step and finishes with three GEMMs over all steps (the input
gradient and both weight gradients). Other dtypes record the per-step ops, as PyTorch does.
"""
import numpy as np

from .. import _threads
from .._nn_kernels import parallel_rows as _parallel_rows
from .._tensor import Tensor
from ..autograd import grad_mode, grad as autograd_grad
from ..ops.joining import stack
from ..ops.pointwise import sigmoid, tanh
from ..ops.registry import primitive, xp_of


def _matmul(xp, a, b, out=None):
    """a @ b (into `out`) on the BLAS threads ember's policy gives it (ember/_threads.py)."""
    if xp is not np:
        return xp.matmul(a, b, out=out)
    return _threads.call_product(lambda a, b: np.matmul(a, b, out=out), a, b)


def _per_step(xp, run, m, k, n):
    """run(matmul) for a loop whose every step multiplies (m, k) @ (k, n). Products too small
    for BLAS threads to pay (ember/_threads.py) run on one thread anyway: then the whole loop
    runs with BLAS held at one thread and calls NumPy's matmul directly (the policy's checks
    cost ~7 us a product, 140 products in a 2-layer step of 35)."""
    if xp is np and m * k * n < _threads.SINGLE_THREAD_PRODUCT:
        return _threads.call_single_threaded(run, np.matmul)
    return run(lambda a, b, out=None: _matmul(xp, a, b, out))


# The forward's gate order (PyTorch's is i, f, g, o): g first, then the three sigmoid gates
# f, i, o, one contiguous block (see lstm_layer_forward's workspace)
_ORDER = ((2, False), (1, True), (0, True), (3, True))     # (PyTorch's gate, negated)


def _gate_columns(xp, w, hidden):
    """w (4H, K) as the GEMM operand (K, 4H), C-contiguous, its column blocks in the
    forward's gate order g, f, i, o with the three sigmoid gates negated.

    Contiguous, because OpenBLAS multiplies by a transposed (Fortran-ordered) matrix more
    slowly (a time step's (20, 200) @ (200, 200) products: 2.2x); the sigmoid gates
    negated, so that their sigmoid is exp, +1, reciprocal over one contiguous block, without
    a negation pass (negating an operand negates a float product exactly: the same bits as
    negating the result)."""
    out = xp.empty((w.shape[1], 4 * hidden), w.dtype)
    for k, (gate, negate) in enumerate(_ORDER):
        _copy_gate(xp, w, gate, hidden, negate, out[:, k * hidden:(k + 1) * hidden])
    return out


def _gate_blocks(xp, w, hidden):
    """w (4H, K) as four (K, H) GEMM operands, one per gate in `_gate_columns`' order and
    signs, stacked (4, K, H) C-contiguous. A time step multiplies h by all four in one
    stacked matmul: four (N, K) @ (K, H) products, which OpenBLAS runs ~1.3x faster than
    one (N, K) @ (K, 4H) ((20, 200) @ (200, 800): 49 us against 65 us), and which write the
    gates gate by gate, each a contiguous block."""
    out = xp.empty((4, w.shape[1], hidden), w.dtype)
    for k, (gate, negate) in enumerate(_ORDER):
        _copy_gate(xp, w, gate, hidden, negate, out[k])
    return out


def _copy_gate(xp, w, gate, hidden, negate, out):
    """out = the transposed rows of `gate` in w (4H, K), negated if `negate`."""
    rows = w[gate * hidden:(gate + 1) * hidden].T
    if negate:
        xp.negative(rows, out=out)
    else:
        out[...] = rows


def _gate_bias(xp, b_ih, b_hh, hidden):
    """b_ih + b_hh in the order and signs of `_gate_columns`."""
    b = b_ih + b_hh
    return xp.concatenate([-b[gate * hidden:(gate + 1) * hidden] if negate
                           else b[gate * hidden:(gate + 1) * hidden]
                           for gate, negate in _ORDER])


def lstm_layer_forward(xp, x, w_ih, w_hh, b_ih, b_hh, h0, c0):
    """(out (L, N, H), h_n, c_n, workspace) of one LSTM layer going forward in time.

    The workspace is (1 + 6L, N, H): c0, then per step the blocks g, f, i, o (activated),
    tanh(c_t), c_t. So each step's sigmoid gates are one contiguous block, and the products
    f c_{t-1} and i g are one multiply of the pair (f, i) by the pair (c_{t-1}, g), which
    lie next to each other (the previous step's last block, this step's first)."""
    steps, batch = x.shape[:2]
    hidden = w_hh.shape[1]
    dtype = x.dtype
    # input pre-activations for all steps in one GEMM, the sigmoid gates negated
    # (_gate_columns); viewed per step as (4, N, H), gate by gate
    xg = _matmul(xp, x.reshape(steps * batch, x.shape[2]), _gate_columns(xp, w_ih, hidden))
    if b_ih is not None:
        xg += _gate_bias(xp, b_ih, b_hh, hidden)
    xg = xg.reshape(steps, batch, 4, hidden).transpose(0, 2, 1, 3)
    w_hh_blocks = _gate_blocks(xp, w_hh, hidden)
    ws = xp.empty((1 + 6 * steps, batch, hidden), dtype)
    ws[0] = c0
    out = xp.empty((steps, batch, hidden), dtype)
    pair = xp.empty((2, batch, hidden), dtype)

    def run(matmul):
        h = h0
        for t in range(steps):
            b = 1 + 6 * t                       # this step's blocks: ws[b:b + 6]
            gates = ws[b:b + 4]
            matmul(h, w_hh_blocks, out=gates)
            xp.add(gates, xg[t], out=gates)
            # sigmoid(x) = 1 / (1 + exp(-x)), as PyTorch's float32 kernel (0 once exp
            # overflows: the loop runs with overflow warnings off, see below)
            sig = ws[b + 1:b + 4]
            xp.exp(sig, out=sig)
            sig += 1
            xp.reciprocal(sig, out=sig)
            xp.tanh(ws[b], out=ws[b])
            # (f, i) * (c_{t-1}, g), then c_t = f c_{t-1} + i g
            xp.multiply(ws[b + 1:b + 3], ws[b - 1:b + 1], out=pair)
            c = ws[b + 5]
            xp.add(pair[0], pair[1], out=c)
            tc = ws[b + 4]
            xp.tanh(c, out=tc)
            h = xp.multiply(ws[b + 3], tc, out=out[t])
        return h
    with np.errstate(over="ignore"):       # (once: entering it costs ~8 us, per step 0.6 ms)
        h = _per_step(xp, run, batch, hidden, 4 * hidden)
    return out, h.copy(), ws[-1].copy(), ws


def _backward_factors(xp, ws, hidden):
    """The chain rule's step-independent factors of `lstm_layer_backward`, for all steps:
    (factors (L, N, 4H) in PyTorch's gate order, dc_from_h (L, N, H)), where
    d pre_i = dc g i(1-i), d pre_f = dc c_prev f(1-f), d pre_g = dc i (1-g^2),
    d pre_o = dh tanh(c) o(1-o), and dc gets dh o (1 - tanh(c)^2) from dh.
    Computed in blocks of steps (each step on its own)."""
    steps, batch = (ws.shape[0] - 1) // 6, ws.shape[1]
    h = hidden
    blocks = ws[1:].reshape(steps, 6, batch, h)        # g, f, i, o, tanh(c), c per step
    c_prev = ws[:-1].reshape(steps, 6, batch, h)[:, 0]
    factors = xp.empty((steps, batch, 4, h), ws.dtype)
    dc_from_h = xp.empty((steps, batch, h), ws.dtype)
    per_step = 6 * batch * h

    def body(s0, s1):
        g, fio = blocks[s0:s1, 0], blocks[s0:s1, 1:4]
        i, o, tc = blocks[s0:s1, 2], blocks[s0:s1, 3], blocks[s0:s1, 4]
        fac = factors[s0:s1]
        sd = xp.subtract(1, fio)                        # sigmoid derivatives s (1 - s)
        sd *= fio                                       # (f, i, o)
        xp.multiply(g, sd[:, 1], out=fac[:, :, 0])
        xp.multiply(c_prev[s0:s1], sd[:, 0], out=fac[:, :, 1])
        one_minus = xp.multiply(g, g)
        xp.subtract(1, one_minus, out=one_minus)
        xp.multiply(i, one_minus, out=fac[:, :, 2])
        xp.multiply(tc, sd[:, 2], out=fac[:, :, 3])
        d = dc_from_h[s0:s1]
        xp.multiply(tc, tc, out=d)
        xp.subtract(1, d, out=d)
        d *= o

    if xp is np and per_step:
        _parallel_rows(body, steps, per_step)
    else:                                   # (another backend, or an empty batch)
        body(0, steps)
    return factors.reshape(steps, batch, 4 * h), dc_from_h


def lstm_layer_backward(xp, x, w_ih, w_hh, h0, c0, out, ws, d_out, d_hn, d_cn, has_bias):
    """Gradients (x, w_ih, w_hh, b, h0, c0) of `lstm_layer_forward` (b: of either bias)."""
    steps, batch = x.shape[:2]
    hidden = w_hh.shape[1]
    dtype = x.dtype
    h4 = 4 * hidden
    f = ws[1:].reshape(steps, 6, batch, hidden)[:, 1]
    factors, dc_from_h = _backward_factors(xp, ws, hidden)
    three = factors[..., :3 * hidden].reshape(steps, batch, 3, hidden)

    dgates = xp.empty((steps, batch, h4), dtype)
    dg3 = dgates[..., :3 * hidden].reshape(steps, batch, 3, hidden)
    # each step's d h_{t-1} = dgates_t @ w_hh as four (N, H) @ (H, H) products, one per
    # gate, in one stacked matmul, then summed: ~1.2x faster than one (N, 4H) @ (4H, H)
    dg_blocks = dgates.reshape(steps, batch, 4, hidden).transpose(0, 2, 1, 3)
    w_hh_blocks = w_hh.reshape(4, hidden, hidden)
    per_gate = xp.empty((4, batch, hidden), dtype)
    dh = xp.zeros((batch, hidden), dtype) if d_hn is None else xp.array(d_hn, dtype)
    dc = xp.zeros((batch, hidden), dtype) if d_cn is None else xp.array(d_cn, dtype)
    tmp = xp.empty((batch, hidden), dtype)

    def run(matmul):
        dh_t, dc_t = dh, dc
        for t in range(steps - 1, -1, -1):
            if d_out is not None:
                dh_t += d_out[t]
            xp.multiply(dh_t, dc_from_h[t], out=tmp)
            dc_t += tmp
            xp.multiply(three[t], dc_t[:, None, :], out=dg3[t])
            xp.multiply(dh_t, factors[t, :, 3 * hidden:], out=dgates[t, :, 3 * hidden:])
            matmul(dg_blocks[t], w_hh_blocks, out=per_gate)
            dh_t = per_gate.sum(axis=0)
            dc_t *= f[t]
        return dh_t, dc_t
    dh, dc = _per_step(xp, run, batch, h4, hidden)
    flat = dgates.reshape(steps * batch, h4)
    dx = _matmul(xp, flat, w_ih).reshape(x.shape)
    dw_ih = _matmul(xp, flat.T, x.reshape(steps * batch, x.shape[2]))
    h_prev = xp.concatenate([h0[None], out[:-1]]) if steps else out
    dw_hh = _matmul(xp, flat.T, h_prev.reshape(steps * batch, hidden))
    db = flat.sum(axis=0) if has_bias else None
    return dx, dw_ih, dw_hh, db, dh, dc


@primitive("mkldnn_rnn_layer", node="MkldnnRnnLayerBackward0", n_outputs=4,
           differentiable_outputs=3,
           save=("input", "w_ih", "w_hh", "b_ih", "b_hh", "hx", "cx", "result", "result3"))
def _lstm_layer(xp, input, w_ih, w_hh, b_ih, b_hh, hx, cx, *, reverse):
    """(output, h_n, c_n, workspace) of one LSTM layer in one direction; `reverse` runs the
    sequence from its last step to its first (the output stays in time order). The
    backward reads the output (saved, so a later in-place change to it is an error, as in
    PyTorch) and the workspace (output 3): the forward's gates and cell states."""
    x = input[::-1] if reverse else input
    out, h_n, c_n, ws = lstm_layer_forward(xp, x, w_ih, w_hh, b_ih, b_hh, hx, cx)
    return (out[::-1].copy() if reverse else out), h_n, c_n, ws


@_lstm_layer.derivative
def _(ctx, d_out, d_hn, d_cn):
    if grad_mode.state.enabled:
        return _differentiable_backward(ctx, d_out, d_hn, d_cn)
    x, w_ih, w_hh = ctx.input, ctx.w_ih, ctx.w_hh
    hidden = w_hh.shape[1]
    ws = ctx.result3
    reverse = ctx.reverse
    out = ctx.result[0]._data
    xd, out = (x._data[::-1], out[::-1]) if reverse else (x._data, out)
    gd = None if d_out is None else (d_out._data[::-1] if reverse else d_out._data)
    dx, dw_ih, dw_hh, db, dh0, dc0 = lstm_layer_backward(
        xp_of(x._device), xd, w_ih._data, w_hh._data, ctx.hx._data, ctx.cx._data,
        out, ws, gd, None if d_hn is None else d_hn._data,
        None if d_cn is None else d_cn._data, ctx.b_ih is not None)
    if reverse:
        dx = dx[::-1].copy()
    device = x._device
    make = Tensor._make
    dtype = x._dtype
    db_t = None if db is None else make(db, dtype, device)
    return (make(dx, dtype, device), make(dw_ih, dtype, device), make(dw_hh, dtype, device),
            db_t, db_t, make(dh0, dtype, device), make(dc0, dtype, device))


def _differentiable_backward(ctx, d_out, d_hn, d_cn):
    """The backward under create_graph: the layer's per-step ops recorded again from the
    saved inputs, and differentiated with a graph (so higher derivatives exist)."""
    inputs = [ctx.input, ctx.w_ih, ctx.w_hh, ctx.b_ih, ctx.b_hh, ctx.hx, ctx.cx]
    out, h_n, c_n = _lstm_steps(*inputs, reverse=ctx.reverse)
    pairs = [(o, g) for o, g in ((out, d_out), (h_n, d_hn), (c_n, d_cn)) if g is not None]
    wanted = [k for k, x in enumerate(inputs) if x is not None and ctx.needs_input_grad[k]]
    grads = autograd_grad([o for o, _ in pairs], [inputs[k] for k in wanted],
                          [g for _, g in pairs], create_graph=True, allow_unused=True)
    result = [None] * len(inputs)
    for k, gk in zip(wanted, grads):
        result[k] = gk
    return tuple(result)


def _lstm_steps(x, w_ih, w_hh, b_ih, b_hh, h, c, reverse):
    """The same layer as per-step ops (each recorded): (output, h_n, c_n)."""
    x_proj = x.matmul(w_ih.t())
    if b_ih is not None:
        x_proj = x_proj + b_ih
    x_steps = x_proj.unbind(0)
    outputs = [None] * len(x_steps)
    for t in (range(len(x_steps) - 1, -1, -1) if reverse else range(len(x_steps))):
        pre = x_steps[t] + h.matmul(w_hh.t())
        if b_hh is not None:
            pre = pre + b_hh
        i, f, g, o = pre.chunk(4, -1)
        c = sigmoid(f) * c + sigmoid(i) * tanh(g)
        h = sigmoid(o) * tanh(c)
        outputs[t] = h
    return stack(outputs, 0), h, c


def lstm_layer(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse):
    """(output, h_n, c_n) of one float32 LSTM layer, recorded as one node."""
    out, h_n, c_n, _ = _lstm_layer(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse=reverse)
    return out, h_n, c_n
