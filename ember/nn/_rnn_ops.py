"""torch's top-level recurrent ops: torch.lstm, torch.gru, torch.rnn_tanh, torch.rnn_relu (a
whole multi-layer, optionally bidirectional recurrence over a flat list of weights, on a padded
(L, N, in) input or on the data and batch sizes of a packed sequence) and the one-step cells
torch.lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell.

The weights come as nn.LSTM & co. hold them (`module._flat_weights`): for each layer and
direction w_ih, w_hh, then b_ih, b_hh when has_biases, then w_hr for an LSTM with projections.
The arithmetic of a step is nn.modules.rnn's `_step`, so the modules and these ops agree.
"""
from .. import _dtype as D
from ..ops.joining import cat, stack
from .functional import dropout as _dropout
from .modules.rnn import _step, check_not_empty
from ._rnn_layer import lstm_layer

__all__ = ["lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell",
           "rnn_relu_cell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _layer_weights(params, has_biases, num_layers, directions, projections):
    """The weights of each (layer, direction), in order, from the flat list."""
    per = 2 + 2 * bool(has_biases) + bool(projections)     # (w_hr last, with projections)
    total = num_layers * directions
    if len(params) % per:
        raise RuntimeError(f"MatrixRef: ArrayRef size {len(params)} not divisible by stride "
                           f"{per}")
    if len(params) // per < total:
        raise RuntimeError(f"ArrayRef: invalid slice, N = {per * (len(params) // per - 1) + per}"
                           f"; M = {per}; size = {len(params)}")
    names = ["w_ih", "w_hh"] + (["b_ih", "b_hh"] if has_biases else []) + \
        (["w_hr"] if projections else [])
    return [dict(zip(names, params[k * per:(k + 1) * per])) for k in range(total)]


def _direction(mode, x, h, c, w, reverse, batch_sizes):
    """One layer in one direction: x is (L, N, in), or packed data when batch_sizes is given."""
    if mode == "LSTM" and batch_sizes is None and w.get("w_hr") is None and \
            x.dtype is D.float32:
        # nn.LSTM's float32 path (one node per layer), so both give the same numbers, as in torch
        return lstm_layer(x.contiguous(), w["w_ih"], w["w_hh"], w.get("b_ih"), w.get("b_hh"),
                          h, c, reverse)
    x_proj = x.matmul(w["w_ih"].t())
    if w.get("b_ih") is not None:
        x_proj = x_proj + w["b_ih"]
    w_hh, b_hh, w_hr = w["w_hh"], w.get("b_hh"), w.get("w_hr")
    if batch_sizes is None:
        x_steps = x_proj.unbind(0)
        outputs = [None] * len(x_steps)
        for t in (reversed(range(len(x_steps))) if reverse else range(len(x_steps))):
            h, c = _step(mode, x_steps[t], h, c, w_hh, b_hh, w_hr)
            outputs[t] = h
        return stack(outputs, 0), h, c
    # packed: sequences run longest first; rows past a step's batch size keep their state
    x_steps = x_proj.split(batch_sizes, 0)
    outputs = [None] * len(batch_sizes)
    steps = range(len(batch_sizes))
    for t in (reversed(steps) if reverse else steps):
        n = batch_sizes[t]
        h_new, c_new = _step(mode, x_steps[t], h[:n], None if c is None else c[:n], w_hh, b_hh,
                             w_hr)
        outputs[t] = h_new
        if n == h.shape[0]:
            h, c = h_new, c_new
        else:
            h = cat([h_new, h[n:]], 0)
            c = None if c is None else cat([c_new, c[n:]], 0)
    return cat(outputs, 0), h, c


def _recurrence(mode, x, h0, c0, params, has_biases, num_layers, dropout, train, bidirectional,
                batch_first, batch_sizes=None):
    directions = 2 if bidirectional else 1
    # an LSTM has projections when its hidden state is narrower than its cell state
    projections = c0 is not None and h0.shape[-1] != c0.shape[-1]
    weights = _layer_weights(list(params), has_biases, num_layers, directions, projections)
    if batch_first and batch_sizes is None:
        x = x.transpose(0, 1)
    if batch_sizes is None:
        check_not_empty(x)
    h_n, c_n = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(directions):
            k = layer * directions + d
            out, h, c = _direction(mode, x, h0[k], None if c0 is None else c0[k], weights[k],
                                   d == 1, batch_sizes)
            outs.append(out)
            h_n.append(h)
            c_n.append(c)
        x = outs[0] if directions == 1 else cat(outs, -1)
        if dropout and train and layer < num_layers - 1:
            x = _dropout(x, dropout, True)
    if batch_first and batch_sizes is None:
        x = x.transpose(0, 1)
    return x, stack(h_n, 0), (stack(c_n, 0) if c0 is not None else None)


def lstm(*args, **kwargs):
    """lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first) -> (output, h_n, c_n); or lstm(data, batch_sizes, hx, params, has_biases,
    num_layers, dropout, train, bidirectional) for a packed sequence."""
    if len(args) > 2 and isinstance(args[2], (tuple, list)) and len(args[2]) and \
            not isinstance(args[1], (tuple, list)):
        data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = \
            _bind(args, kwargs, ("data", "batch_sizes", "hx", "params", "has_biases",
                                 "num_layers", "dropout", "train", "bidirectional"))
        _check_two(hx, "lstm")
        return _recurrence("LSTM", data, hx[0], hx[1], params, has_biases, num_layers, dropout,
                           train, bidirectional, False, _sizes(batch_sizes))
    (input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
     batch_first) = _bind(args, kwargs, ("input", "hx", "params", "has_biases", "num_layers",
                                          "dropout", "train", "bidirectional", "batch_first"))
    _check_two(hx, "lstm")
    return _recurrence("LSTM", input, hx[0], hx[1], params, has_biases, num_layers, dropout,
                       train, bidirectional, batch_first)


def _one_state(mode):
    def op(*args, **kwargs):
        if len(args) > 3 and isinstance(args[3], (tuple, list)):
            data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, \
                bidirectional = _bind(args, kwargs, (
                    "data", "batch_sizes", "hx", "params", "has_biases", "num_layers",
                    "dropout", "train", "bidirectional"))
            out, h, _ = _recurrence(mode, data, hx, None, params, has_biases, num_layers,
                                    dropout, train, bidirectional, False, _sizes(batch_sizes))
            return out, h
        (input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
         batch_first) = _bind(args, kwargs, ("input", "hx", "params", "has_biases",
                                              "num_layers", "dropout", "train", "bidirectional",
                                              "batch_first"))
        out, h, _ = _recurrence(mode, input, hx, None, params, has_biases, num_layers, dropout,
                                train, bidirectional, batch_first)
        return out, h
    op.__name__ = op.__qualname__ = mode.lower()
    op.__doc__ = (f"{mode.lower()}(input, hx, params, has_biases, num_layers, dropout, train, "
                  f"bidirectional, batch_first) -> (output, h_n); or the packed form "
                  f"(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, "
                  f"bidirectional)")
    return op


gru = _one_state("GRU")
rnn_tanh = _one_state("RNN_TANH")
rnn_relu = _one_state("RNN_RELU")


def _bind(args, kwargs, names):
    values = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names or k in values:
            raise TypeError(f"got an unexpected keyword argument '{k}'")
        values[k] = v
    missing = [n for n in names if n not in values]
    if missing or len(args) > len(names):
        raise TypeError(f"expected {len(names)} arguments ({', '.join(names)})")
    return [values[n] for n in names]


def _sizes(batch_sizes):
    return [int(n) for n in batch_sizes.tolist()]


def _check_two(hx, name):
    if len(hx) != 2:
        raise RuntimeError(f"{name} expects two hidden states")


# ----------------------------------------------------------------------------- cells
def _cell_checks(name, input, hx, w_ih, w_hh, gates):
    hidden = w_hh.shape[1]
    if w_ih.shape[0] != gates * hidden:
        raise RuntimeError(f"weight_ih first dim must be {gates} * hidden_size = "
                           f"{gates * hidden}, but got {w_ih.shape[0]}")
    for i, h in enumerate(hx):
        if input.dim() > 1 and h.dim() > 1 and input.shape[0] != h.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{i} "
                               f"batch size {h.shape[0]}")


def _cell(mode, input, h, c, w_ih, w_hh, b_ih, b_hh):
    x_proj = input.matmul(w_ih.t())
    if b_ih is not None:
        x_proj = x_proj + b_ih
    return _step(mode, x_proj, h, c, w_hh, b_hh)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    _cell_checks("lstm_cell", input, hx, w_ih, w_hh, 4)
    return _cell("LSTM", input, hx[0], hx[1], w_ih, w_hh, b_ih, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _cell_checks("gru_cell", input, [hx], w_ih, w_hh, 3)
    return _cell("GRU", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _cell_checks("rnn_tanh_cell", input, [hx], w_ih, w_hh, 1)
    return _cell("RNN_TANH", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _cell_checks("rnn_relu_cell", input, [hx], w_ih, w_hh, 1)
    return _cell("RNN_RELU", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]
