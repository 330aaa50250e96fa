"""GradBucket: what DistributedDataParallel hands a communication hook (register_comm_hook)."""


class GradBucket:
    """One bucket of gradients: `buffer()` is their flat concatenation (the hook reduces it),
    `gradients()` the per-parameter views into it, `parameters()` the parameters."""

    def __init__(self, index, buffer, params, offsets, is_last):
        self._index = index
        self._buffer = buffer
        self._params = params
        self._offsets = offsets
        self._is_last = is_last

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def gradients(self):
        return [self._buffer[start:end].view(p.shape)
                for p, start, end in zip(self._params, self._offsets, self._offsets[1:])]

    def parameters(self):
        return list(self._params)

    def is_last(self):
        return self._is_last

    def set_buffer(self, buffer):
        self._buffer = buffer
