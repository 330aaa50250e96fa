"""AdaptiveLogSoftmaxWithLoss: a softmax over many classes, cheap for the frequent ones.

The head scores the `cutoffs[0]` most frequent classes plus one entry per cluster of rarer
classes; cluster i then has its own small classifier (a projection down by div_value ** (i+1),
then up to its classes). A class's log probability is its head log probability, or its
cluster's head log probability plus its log probability within the cluster.
"""
from collections import namedtuple

from .. import functional as F
from ...ops.reduction import argmax
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 \
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        factory = dict(device=device, dtype=dtype)
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, size, bias=False, **factory)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for down, up in self.tail:
            down.reset_parameters()
            up.reset_parameters()

    def forward(self, input_, target_):
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        n = target.size(0)
        # each row's log probability within its cluster (0 for the shortlist), and the head
        # entry it reads: its class, or its cluster's entry
        output = input.new_zeros(n)
        head_index = target.new_empty(n)
        used = 0
        bounds = [0] + self.cutoffs
        for i, (low, high) in enumerate(zip(bounds[:-1], bounds[1:])):
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().squeeze()
            if rows.numel() == 0:
                continue
            if i == 0:
                head_index.index_copy_(0, rows, target[mask])
            else:
                within = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
                head_index.index_fill_(0, rows, self.shortlist_size + i - 1)
                picked = within.gather(1, (target[mask] - low).unsqueeze(1))
                output.index_copy_(0, rows, picked.squeeze(1))
            used += rows.numel()
        if used != n:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head = F.log_softmax(self.head(input), dim=1)
        output += head.gather(1, head_index.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _full_log_prob(self, input, head_output):
        """Every class's log probability, from the input and the head's output."""
        out = input.new_empty((head_output.size(0), self.n_classes))
        head = F.log_softmax(head_output, dim=1)
        out[:, :self.shortlist_size] = head[:, :self.shortlist_size]
        for i, (start, stop) in enumerate(zip(self.cutoffs[:-1], self.cutoffs[1:])):
            within = F.log_softmax(self.tail[i](input), dim=1)
            out[:, start:stop] = within + head[:, self.shortlist_size + i].unsqueeze(1)
        return out

    _get_full_log_prob = _full_log_prob

    def log_prob(self, input):
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        head_output = self.head(input)
        output = argmax(head_output, dim=1)
        # only rows whose best head entry is a cluster need the full distribution
        in_cluster = output >= self.shortlist_size
        if not in_cluster.any():
            return output
        if in_cluster.all():
            return argmax(self._full_log_prob(input, head_output), dim=1)
        output[in_cluster] = argmax(self._full_log_prob(input[in_cluster],
                                                        head_output[in_cluster]), dim=1)
        return output
