"""RNN, LSTM and GRU: multi-layer, optionally bidirectional recurrent layers (PyTorch's layout).

Parameters are named and shaped exactly as in PyTorch (weight_ih_l0, weight_hh_l0, bias_ih_l0,
bias_hh_l0, ..._reverse, weight_hr_l0 for an LSTM projection), so state_dicts interchange. Each
layer first projects the whole sequence with one GEMM (x W_ih^T + b_ih); only the recurrent
part runs in the loop over time steps. A PackedSequence input (nn.utils.rnn) runs the same loop
over the running sequences of each step only (see `_run_packed`).
"""
import math
import numbers
import warnings

from ... import _dtype as D
from ...ops.creation import empty, zeros
from ...ops.joining import stack, cat
from ...ops.pointwise import sigmoid, tanh, relu
from .. import init, functional as F
from .._rnn_layer import lstm_layer
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or \
                isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so "
                          f"non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", UserWarning,
                          stacklevel=3)
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: "
                            f"{type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate_size = _GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [(f"weight_ih_l{layer}{suffix}", (gate_size, layer_input)),
                          (f"weight_hh_l{layer}{suffix}", (gate_size, real_hidden))]
                if bias:
                    shapes += [(f"bias_ih_l{layer}{suffix}", (gate_size,)),
                               (f"bias_hh_l{layer}{suffix}", (gate_size,))]
                if proj_size > 0:
                    shapes.append((f"weight_hr_l{layer}{suffix}", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name, Parameter(empty(*shape, device=device, dtype=dtype)))
                self._flat_weights_names.extend(name for name, _ in shapes)
                self._all_weights.append([name for name, _ in shapes])
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        pass            # no cuDNN weight buffer here: a no-op, as on CPU in PyTorch

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ------------------------------------------------------------------ forward
    def _name(self):
        return {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(self.mode, self.mode)

    def _check_input(self, input):
        if input.dim() not in (2, 3):
            tail = " tensor instead" if self._name() == "RNN" else " instead"
            raise ValueError(f"{self._name()}: Expected input to be 2D or 3D, got "
                             f"{input.dim()}D{tail}")
        weight = self.weight_ih_l0
        if input.dtype is not weight.dtype:
            raise ValueError(f"{self._name()} input dtype ({_dtype_name(input.dtype)}) does not "
                             f"match weight dtype ({_dtype_name(weight.dtype)}). Convert input: "
                             f"input.to({_dtype_name(weight.dtype)}), or convert model: "
                             f"model.to({_dtype_name(input.dtype)})")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _state_shape(self, batch, size):
        directions = 2 if self.bidirectional else 1
        return (self.num_layers * directions, batch, size)

    def _check_hidden(self, hx, expected, what="hidden"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"Expected {what} size {expected}, got {list(hx.shape)}")

    def _cell(self, x_proj, h, c, weights):
        return _step(self.mode, x_proj, h, c, weights["weight_hh"], weights.get("bias_hh"),
                     weights.get("weight_hr"))

    def _run_direction(self, x, h, c, layer, direction, batch_sizes=None):
        """One layer in one direction over the whole sequence: x is (L, N, in), or the data
        of a PackedSequence (sum of batch_sizes, in) when batch_sizes (a list) is given."""
        suffix = "_reverse" if direction else ""
        weights = {}
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"):
            full = f"{name}_l{layer}{suffix}"
            if full in self._parameters:
                weights[name] = getattr(self, full)
        if batch_sizes is None and self._one_node(x):
            # PyTorch's float32 path: the layer as one node (see _rnn_layer.py)
            return lstm_layer(x, weights["weight_ih"], weights["weight_hh"],
                              weights.get("bias_ih"), weights.get("bias_hh"), h, c,
                              bool(direction))
        x_proj = x.matmul(weights["weight_ih"].t())              # the sequence in one GEMM
        if "bias_ih" in weights:
            x_proj = x_proj + weights["bias_ih"]
        if batch_sizes is not None:
            return self._run_packed(x_proj, h, c, weights, direction, batch_sizes)
        steps = range(x.shape[0] - 1, -1, -1) if direction else range(x.shape[0])
        outputs = [None] * x.shape[0]
        # one unbind, not x_proj[t] per step: each indexing node's backward would make a
        # full-size gradient (zero but at step t) for the engine to sum, O(L^2) work; the
        # unbind node stacks the L step gradients once
        x_steps = x_proj.unbind(0)
        for t in steps:
            h, c = self._cell(x_steps[t], h, c, weights)
            outputs[t] = h
        return stack(outputs, 0), h, c

    def _run_packed(self, x_proj, h, c, weights, direction, batch_sizes):
        """The time loop over packed data. Sequences are sorted longest first, so at step t
        the running ones are the first batch_sizes[t] rows of the state; the other rows keep
        their state: the last step of a finished sequence (forwards), or h0 for one that has
        not started yet (backwards). So h, c end as each sequence's state at its true end."""
        x_steps = x_proj.split(list(batch_sizes), 0)    # one node for all steps (as above)
        steps = range(len(batch_sizes))
        outputs = [None] * len(batch_sizes)
        for t in (reversed(steps) if direction else steps):
            size = batch_sizes[t]
            rows = x_steps[t]
            h_new, c_new = self._cell(rows, h[:size], None if c is None else c[:size], weights)
            outputs[t] = h_new
            if size == h.shape[0]:
                h, c = h_new, c_new
            else:
                h = cat([h_new, h[size:]], 0)
                c = None if c is None else cat([c_new, c[size:]], 0)
        return cat(outputs, 0), h, c

    def _one_node(self, x):
        """Whether each layer runs as one node: PyTorch's oneDNN path (float32 LSTM without
        projections), which takes the sequence contiguous."""
        return self.mode == "LSTM" and not self.proj_size and x.dtype is D.float32

    def _run(self, x, h0, c0, batch_sizes=None):
        """All layers; x is (L, N, in) or packed data (with batch_sizes, a list); h0/c0 are
        (layers*directions, N, size)."""
        if batch_sizes is None:
            check_not_empty(x)
        directions = 2 if self.bidirectional else 1
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            if batch_sizes is None and self._one_node(x):
                x = x.contiguous()              # (a copy, recorded, as in PyTorch)
            outs = []
            for direction in range(directions):
                k = layer * directions + direction
                out, h, c = self._run_direction(x, h0[k], None if c0 is None else c0[k], layer,
                                                direction, batch_sizes)
                outs.append(out)
                h_n.append(h)
                c_n.append(c)
            x = outs[0] if directions == 1 else cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, stack(h_n, 0), (stack(c_n, 0) if c0 is not None else None)


def check_not_empty(x):
    """torch's error for a padded sequence (L, N, in) of length 0, for the modules and the
    functional ops (torch.lstm, ...) alike."""
    if x.shape[0] == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")


def _step(mode, x_proj, h, c, w_hh, b_hh, w_hr=None):
    """One time step of a cell. x_proj = x W_ih^T + b_ih (precomputed); returns (h, c)."""
    gh = h.matmul(w_hh.t())
    if b_hh is not None:
        gh = gh + b_hh
    if mode == "LSTM":
        i, f, g, o = (x_proj + gh).chunk(4, -1)        # PyTorch's gate order
        c = sigmoid(f) * c + sigmoid(i) * tanh(g)
        h = sigmoid(o) * tanh(c)
        if w_hr is not None:
            h = h.matmul(w_hr.t())
        return h, c
    if mode == "GRU":
        xr, xz, xn = x_proj.chunk(3, -1)
        hr, hz, hn = gh.chunk(3, -1)
        r = sigmoid(xr + hr)
        z = sigmoid(xz + hz)
        n = tanh(xn + r * hn)
        return (1 - z) * n + z * h, None
    pre = x_proj + gh
    return (tanh(pre) if mode == "RNN_TANH" else relu(pre)), None


def _dtype_name(dtype):
    return repr(dtype)


class RNN(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             f"'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        return _forward_simple(self, input, hx)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return _forward_simple(self, input, hx)


def _forward_simple(module, input, hx):
    """RNN/GRU forward: (output, h_n), batched, batch_first, unbatched or packed."""
    if isinstance(input, PackedSequence):
        return _forward_packed(module, input, hx, None)
    module._check_input(input)
    batched = input.dim() == 3
    if batched:
        if hx is not None and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                               f"{hx.dim()}-D tensor")
        x = input.transpose(0, 1) if module.batch_first else input
    else:
        if hx is not None and hx.dim() != 2:
            raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got "
                               f"{hx.dim()}-D tensor")
        x = input.unsqueeze(1)
        hx = hx.unsqueeze(1) if hx is not None else None
    expected = module._state_shape(x.shape[1], module.hidden_size)
    if hx is None:
        hx = zeros(expected, dtype=input.dtype, device=input.device)
    else:
        module._check_hidden(hx, expected)
    out, h_n, _ = module._run(x, hx, None)
    if not batched:
        return out.squeeze(1), h_n.squeeze(1)
    return (out.transpose(0, 1) if module.batch_first else out), h_n


def _forward_packed(module, packed, h0, c0):
    """A PackedSequence through the layers: (PackedSequence output, h_n[, c_n]).

    The states the caller passes (and gets back) are in the original batch order; inside,
    the batch is sorted longest first, as the packed data is. batch_first plays no part."""
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    if data.dim() != 2:
        raise RuntimeError(f"input must have 2 dimensions, got {data.dim()}")
    module._check_input(data)
    sizes = batch_sizes.tolist()
    lstm = module.mode == "LSTM"
    real_hidden = module.proj_size if module.proj_size > 0 else module.hidden_size
    h_shape = module._state_shape(sizes[0], real_hidden)
    c_shape = module._state_shape(sizes[0], module.hidden_size)
    if h0 is None:
        h0 = zeros(h_shape, dtype=data.dtype, device=data.device)
        c0 = zeros(c_shape, dtype=data.dtype, device=data.device) if lstm else None
    else:
        # sorted first, checked after: PyTorch's order (and so its messages)
        if sorted_indices is not None:
            h0 = h0.index_select(1, sorted_indices)
            c0 = c0.index_select(1, sorted_indices) if lstm else None
        module._check_hidden(h0, h_shape, "hidden[0]" if lstm else "hidden")
        if lstm:
            module._check_hidden(c0, c_shape, "hidden[1]")
    out, h_n, c_n = module._run(data, h0, c0, sizes)
    if unsorted_indices is not None:
        h_n = h_n.index_select(1, unsorted_indices)
        c_n = c_n.index_select(1, unsorted_indices) if lstm else None
    output = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
    return (output, (h_n, c_n)) if lstm else (output, h_n)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            h0, c0 = hx if hx is not None else (None, None)
            return _forward_packed(self, input, h0, c0)
        self._check_input(input)
        batched = input.dim() == 3
        if hx is not None:
            h0, c0 = hx
            if batched and (h0.dim() != 3 or c0.dim() != 3):
                raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D but "
                                   f"got ({h0.dim()}-D, {c0.dim()}-D) tensors")
            if not batched and (h0.dim() != 2 or c0.dim() != 2):
                raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be 2-D but "
                                   f"got ({h0.dim()}-D, {c0.dim()}-D) tensors")
        x = input if not batched else (input.transpose(0, 1) if self.batch_first else input)
        if not batched:
            x = x.unsqueeze(1)
            if hx is not None:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        h_shape = self._state_shape(x.shape[1], real_hidden)
        c_shape = self._state_shape(x.shape[1], self.hidden_size)
        if hx is None:
            h0 = zeros(h_shape, dtype=input.dtype, device=input.device)
            c0 = zeros(c_shape, dtype=input.dtype, device=input.device)
        else:
            self._check_hidden(h0, h_shape, "hidden[0]")
            self._check_hidden(c0, c_shape, "hidden[1]")
        out, h_n, c_n = self._run(x, h0, c0)
        if not batched:
            return out.squeeze(1), (h_n.squeeze(1), c_n.squeeze(1))
        return (out.transpose(0, 1) if self.batch_first else out), (h_n, c_n)


# ============================================================================ cells
class RNNCellBase(Module):
    """One step of a recurrent layer: weight_ih, weight_hh, bias_ih, bias_hh as in PyTorch
    (num_chunks gates of hidden_size rows each: 1 for RNNCell, 3 GRUCell, 4 LSTMCell)."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gate_size = num_chunks * hidden_size
        kw = dict(device=device, dtype=dtype)
        self.weight_ih = Parameter(empty(gate_size, input_size, **kw))
        self.weight_hh = Parameter(empty(gate_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(empty(gate_size, **kw))
            self.bias_hh = Parameter(empty(gate_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, states):
        """Check the input (1-D or 2-D) and states as PyTorch does; batch them; zeros if None."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.dim()}D instead")
        for i, s in enumerate(states):
            if s is not None and s.dim() not in (1, 2):
                what = f"hx[{i}]" if len(states) == 2 else "hidden"     # LSTMCell: (h, c)
                raise ValueError(f"{type(self).__name__}: Expected {what} to be 1D or 2D, got "
                                 f"{s.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} "
                               f"expected {self.input_size}")
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        out = []
        for i, s in enumerate(states):
            if s is None:
                s = zeros((x.shape[0], self.hidden_size), dtype=input.dtype,
                          device=input.device)
            elif not batched:
                s = s.unsqueeze(0)
            if s.shape[0] != x.shape[0]:
                raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match hidden{i} "
                                   f"batch size {s.shape[0]}")
            if s.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got "
                                   f"{s.shape[1]}, expected {self.hidden_size}")
            out.append(s)
        x_proj = x.matmul(self.weight_ih.t())
        if self.bias_ih is not None:
            x_proj = x_proj + self.bias_ih
        return batched, x_proj, out


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        batched, x_proj, (h,) = self._prepare(input, [hx])
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        h, _ = _step(mode, x_proj, h, None, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        h0, c0 = hx if hx is not None else (None, None)
        batched, x_proj, (h, c) = self._prepare(input, [h0, c0])
        h, c = _step("LSTM", x_proj, h, c, self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        batched, x_proj, (h,) = self._prepare(input, [hx])
        h, _ = _step("GRU", x_proj, h, None, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)
