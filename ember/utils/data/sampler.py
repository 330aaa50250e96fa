"""Samplers: the order in which a DataLoader visits a map-style dataset's indices.

The draws are torch's (the same ops on the same stream), so a seeded shuffle visits the
indices in torch's order.
"""
from ... import _dtype
from ...ops import creation as _creation, random as _random


class Sampler:
    """Iterates over dataset indices (or, for a batch sampler, lists of indices)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _seed_from(generator=None):
    """A seed drawn as torch draws one: random_() on an int64 scalar."""
    return int(_random.random_(_creation.empty((), dtype=_dtype.int64), generator=generator)
               .item())


def _generator_or_fresh(generator):
    # Without a generator, seed a fresh one from the default generator, as torch does, so that
    # ember.manual_seed(...) makes shuffling reproducible and each epoch differs.
    if generator is not None:
        return generator
    return _random.Generator().manual_seed(_seed_from())


class RandomSampler(Sampler):
    """A random permutation of the indices, or `num_samples` draws with replacement."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = _generator_or_fresh(self.generator)
        if self.replacement:
            # lazily, in torch's chunks of 32 draws: num_samples may be astronomically large
            # (an "infinite" sampler), and the chunking decides how the stream is consumed
            for _ in range(self.num_samples // 32):
                yield from _random.randint(0, n, (32,), generator=generator).tolist()
            yield from _random.randint(0, n, (self.num_samples % 32,),
                                         generator=generator).tolist()
            return
        # whole permutations, then a part of one more when num_samples is not a multiple of n
        for _ in range(self.num_samples // n):
            yield from _random.randperm(n, generator=generator).tolist()
        yield from _random.randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        order = _random.randperm(len(self.indices), generator=self.generator).tolist()
        for i in order:
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probabilities proportional to `weights`."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or \
                num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        weights = _creation.as_tensor(weights, dtype=_dtype.float64)
        if weights.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights.shape)}")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = _random.multinomial(self.weights, self.num_samples, self.replacement,
                                      generator=self.generator)
        yield from drawn.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of `sampler` into lists of `batch_size`."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
