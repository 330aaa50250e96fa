"""Variable-length sequences: PackedSequence and packing/padding (torch.nn.utils.rnn).

A packed sequence stores the time steps of a batch of sequences, sorted longest first, one
time step after another: `data` holds step 0 of every sequence, then step 1 of every sequence
still running, ...; `batch_sizes[t]` says how many sequences run at step t. Everything here is
built from differentiable ember ops, so gradients flow through packing and padding.
"""
from collections import namedtuple

import numpy as np

from ..._tensor import Tensor
from ... import _dtype as D
from ..._printing import scalar_type_name
from ...ops.registry import primitive
from ...ops.creation import tensor, full, zeros, arange

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]

_BATCH_SIZES_ON_CPU = (
    "batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
    "manually. They should be instantiated by functions like pack_sequence and "
    "pack_padded_sequences in nn.utils.rnn. "
    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")


def invert_permutation(permutation):
    """The permutation that undoes `permutation` (None stays None)."""
    if permutation is None:
        return None
    inverse = np.empty_like(permutation._data)
    inverse[permutation._data] = np.arange(permutation._data.shape[0])
    return tensor(inverse, device=permutation.device)


class PackedSequence(namedtuple("PackedSequence_",
                                ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A batch of variable-length sequences, packed (see the module docstring)."""
    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(_BATCH_SIZES_ON_CPU)
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        data, batch_sizes = data          # PackedSequence((data, batch_sizes)), as PyTorch allows
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """data moved/cast as Tensor.to does; the index tensors follow data's device;
        batch_sizes stays on the CPU. Returns self when data is unchanged."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        device = data.device
        sorted_indices = None if self.sorted_indices is None else \
            self.sorted_indices.to(device)
        unsorted_indices = None if self.unsorted_indices is None else \
            self.unsorted_indices.to(device)
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs):
        device = kwargs.pop("device", args[0] if args else "cuda")
        return self.to(device, **kwargs)

    def cpu(self, *args, **kwargs):
        return self.to("cpu", *args, **kwargs)

    def double(self):
        return self.to(dtype=D.float64)

    def float(self):
        return self.to(dtype=D.float32)

    def half(self):
        return self.to(dtype=D.float16)

    def long(self):
        return self.to(dtype=D.int64)

    def int(self):
        return self.to(dtype=D.int32)

    def short(self):
        return self.to(dtype=D.int16)

    def char(self):
        return self.to(dtype=D.int8)

    def byte(self):
        return self.to(dtype=D.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()

    def pin_memory(self):
        return self


# ------------------------------------------------------------------------------- packing
@primitive("_pack_padded_sequence", node="PackPaddedSequenceBackward0")
def _pack(xp, input, *, mask):
    """input (T, B, *) -> the packed rows: step-major, the running sequences of each step."""
    return input[xp.asarray(mask)]


@_pack.derivative
def _(ctx, grad):
    mask = ctx.mask
    rows = tensor(np.flatnonzero(mask), device=grad.device)
    shape = ctx.input_shape()
    flat = zeros((mask.size,) + tuple(shape[2:]), dtype=grad.dtype, device=grad.device)
    return flat.index_add(0, rows, grad).reshape(shape)


def _lengths_array(lengths):
    """lengths as a NumPy int64 vector (a list, tuple or 1-D CPU tensor, as PyTorch takes)."""
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1 or lengths.device.type != "cpu":
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.dim()}D {lengths.device.type} "
                               f"{scalar_type_name(lengths.dtype)} tensor")
        return lengths._data.astype(np.int64)
    return np.asarray(lengths, dtype=np.float64).astype(np.int64).reshape(-1)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) or (B, T, *) of sequences of the given lengths."""
    lengths = _lengths_array(lengths)
    if enforce_sorted:
        sorted_indices = None
    else:
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
        sorted_indices = tensor(order, device=input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch = input.shape[1]
    if lengths.shape[0] != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lengths.shape[0]} (batch_size={batch})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if np.any(lengths[1:] > lengths[:-1]):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
            "to sidestep this requirement if you do not need ONNX exportability.")
    if lengths[0] > input.shape[0]:
        # PyTorch reads past the end of the input here; ember refuses
        raise ValueError(f"pack_padded_sequence: a length ({lengths[0]}) exceeds the padded "
                         f"sequence length ({input.shape[0]})")
    steps = np.arange(input.shape[0])
    mask = steps[:, None] < lengths[None, :]            # (T, B): is sequence b running at t?
    data = _pack(input, mask=mask)
    batch_sizes = tensor(mask[:lengths[0]].sum(1).astype(np.int64))
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo pack_padded_sequence: (padded (T, B, *) or (B, T, *), lengths)."""
    data, batch_sizes = sequence.data, sequence.batch_sizes._data
    steps = batch_sizes.shape[0]
    if total_length is not None:
        total_length = int(total_length)
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and "
                             f"max sequence length being {steps}")
        steps = total_length
    batch = int(batch_sizes[0])
    padded = full((steps, batch) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
                  device=data.device)
    start = 0
    for t, size in enumerate(batch_sizes.tolist()):    # one copy per time step, as PyTorch
        padded[t, :size] = data[start:start + size]
        start += size
    # a sequence's length: the number of steps where it was still running
    lengths = (batch_sizes[None, :] > np.arange(batch)[:, None]).sum(1).astype(np.int64)
    lengths = tensor(lengths)
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of different lengths into one (T, B, *) (or (B, T, *)) tensor."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    steps = max(s.shape[0] for s in sequences)
    shape = (len(sequences), steps) if batch_first else (steps, len(sequences))
    out = full(shape + tuple(first.shape[1:]), padding_value, dtype=first.dtype,
               device=first.device)
    for i, seq in enumerate(sequences):              # one copy per sequence, as PyTorch
        n = seq.shape[0]
        rows = slice(0, n) if padding_side == "right" else slice(steps - n, steps)
        if batch_first:
            out[i, rows] = seq
        else:
            out[rows, i] = seq
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into its sequences (a list)."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)            # in place, as PyTorch does
    out = []
    for seq, length in zip(padded_sequences, lengths.tolist()):
        out.append(seq[arange(length, device=seq.device)])
    return out


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences (each (L_i, *)) of decreasing (or any, unsorted) lengths."""
    lengths = tensor([s.shape[0] for s in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
