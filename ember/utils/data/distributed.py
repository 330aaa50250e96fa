"""DistributedSampler: each of `num_replicas` processes reads its own share of a dataset.

num_replicas and rank default to the default process group's world size and rank (torch's
ValueError when there is no group). The shuffle is the same in every process: a permutation
from a generator seeded with seed + epoch.
"""
import math

from ... import distributed as _distributed
from ...ops import random as _random
from .sampler import Sampler


class DistributedSampler(Sampler):
    """Rank `rank`'s indices: every num_replicas-th of the (shuffled, padded or trimmed to a
    multiple of num_replicas) indices, starting at `rank`."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None:
            num_replicas = _distributed.get_world_size()    # (ValueError without a group)
        if rank is None:
            rank = _distributed.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            # the same permutation in every process: seeded by seed + epoch
            generator = _random.Generator().manual_seed(self.seed + self.epoch)
            indices = _random.randperm(n, generator=generator).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            # padded by repeating the start (as often as needed) so every rank gets as many
            padding = self.total_size - n
            indices += (indices * math.ceil(padding / max(n, 1)))[:padding]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Shuffle differently in each epoch (call before iterating)."""
        self.epoch = epoch
