"""DataLoader: batches from a dataset, in this process or in worker processes.

With `num_workers > 0` each worker is a process that receives lists of indices (or, for an
IterableDataset, "next batch" requests) on its own queue and sends collated batches back on a
shared queue. The main process hands out requests round robin, keeps up to
`prefetch_factor * num_workers` of them in flight, and yields the results in request order.
It never waits without a deadline: every wait polls the workers, so a worker that dies raises
an error instead of hanging the loop.
"""
import itertools
import os
import queue
import random
import sys
import time
import traceback
import warnings

import numpy as np

from ...ops import random as _random
from . import _collate
from ._collate import default_collate, default_convert  # noqa: F401  (torch's import path)
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _seed_from
import multiprocessing
from ... import cuda

_POLL_SECONDS = 1.0     # how often a waiting process checks that its peer is still alive


class WorkerInfo:
    """What `get_worker_info()` returns inside a worker process."""

    def __init__(self, id, num_workers, seed, dataset):
        self.id = id
        self.num_workers = num_workers
        self.seed = seed
        self.dataset = dataset

    def __repr__(self):
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
                f"dataset={self.dataset!r})")


_worker_info = None


def get_worker_info():
    """The WorkerInfo of this worker process, or None in the main process."""
    return _worker_info


class _ExceptionWrapper:
    """An exception raised in a worker, carried to the main process and raised there."""

    def __init__(self, where):
        exc_type, exc, _ = sys.exc_info()
        self.exc_type = exc_type
        self.message = f"Caught {exc_type.__name__} {where}.\nOriginal " + \
            "".join(traceback.format_exception(exc_type, exc, exc.__traceback__))

    def reraise(self):
        try:
            exc = self.exc_type(self.message)
        except Exception:           # an exception type that needs other arguments
            raise RuntimeError(self.message) from None
        raise exc


_NEW_EPOCH = "new epoch"     # sent to persistent workers at the start of each later epoch


class _Exhausted:
    """A worker's answer once its copy of an IterableDataset has run out."""


class _Fetcher:
    """Turns a request (a list of indices, or None for "the next batch") into a batch."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last, batch_size):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.batch_size = batch_size
        self.iterator = iter(dataset) if isinstance(dataset, IterableDataset) else None

    def fetch(self, indices):
        if self.iterator is not None:
            if not self.auto_collation:
                return self.collate_fn(next(self.iterator))
            batch = list(itertools.islice(self.iterator, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                raise StopIteration
            return self.collate_fn(batch)
        if not self.auto_collation:
            return self.collate_fn(self.dataset[indices])
        getitems = getattr(self.dataset, "__getitems__", None)
        batch = getitems(indices) if callable(getitems) else [self.dataset[i] for i in indices]
        return self.collate_fn(batch)


def _seed_everything(seed, worker_id):
    """A worker's generators, seeded as torch seeds them: ember's and Python's with
    seed = base seed + worker id; NumPy's legacy global one (so that workers do not repeat each
    other's NumPy augmentations) with 4 words hashed from (worker id, the base seed's low and
    high 32 bits) the way NumPy's SeedSequence hashes them, which is what torch computes."""
    _random.manual_seed(seed)
    random.seed(seed)
    base = seed - worker_id
    entropy = [worker_id, base & 0xFFFFFFFF, base >> 32, 0]
    np.random.seed(np.random.SeedSequence(entropy, pool_size=4).generate_state(4))


def _worker_loop(dataset, index_queue, result_queue, fetcher_args, worker_id, num_workers,
                 seed, worker_init_fn, parent_pid):
    global _worker_info
    result_queue.cancel_join_thread()     # never block this process's exit on unsent data
    init_error = None
    try:
        _seed_everything(seed, worker_id)
        _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
        if worker_init_fn is not None:
            worker_init_fn(worker_id)
        fetcher = _Fetcher(dataset, *fetcher_args)
    except Exception:
        init_error = _ExceptionWrapper(f"in DataLoader worker process {worker_id}")
    while True:
        try:
            request = index_queue.get(timeout=_POLL_SECONDS)
        except queue.Empty:
            if os.getppid() != parent_pid:      # the main process is gone: stop
                return
            continue
        if request is None:
            return
        if request == _NEW_EPOCH:               # persistent workers: start the stream again
            if init_error is None:
                fetcher = _Fetcher(dataset, *fetcher_args)
            continue
        send_idx, indices = request
        if init_error is not None:
            result_queue.put((send_idx, init_error))
            continue
        try:
            data = fetcher.fetch(indices)
        except StopIteration:
            data = _Exhausted()
        except Exception:
            data = _ExceptionWrapper(f"in DataLoader worker process {worker_id}")
        result_queue.put((send_idx, data))


class DataLoader:
    """Iterates over batches of a dataset (see torch.utils.data.DataLoader)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._workers_iter = None     # the live worker pool, with persistent_workers
        self._iterable = isinstance(dataset, IterableDataset)

        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else \
                SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = _collate.default_collate if self._auto_collation else \
                _collate.default_convert
        self.collate_fn = collate_fn

        self.pin_memory = pin_memory      # page-locked memory only matters for a GPU copy
        self.pin_memory_device = pin_memory_device

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None or (self._iterable and self.batch_size is not None)

    @property
    def _index_sampler(self):
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)

    def __iter__(self):
        if self.pin_memory:
            if not cuda.is_available():
                warnings.warn("'pin_memory' argument is set as true but no accelerator is "
                              "found, then device pinned memory won't be used.")
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if not self.persistent_workers:
            return _MultiProcessIter(self)
        if self._workers_iter is None:
            self._workers_iter = _MultiProcessIter(self)
        else:
            self._workers_iter._start_epoch(self, first=False)
        return self._workers_iter

    def _fetcher_args(self):
        return (self._auto_collation, self.collate_fn, self.drop_last, self.batch_size)

    def _base_seed(self):
        """Drawn as torch draws it, once for every iterator (random_() on an int64 scalar,
        from the loader's generator or the global one)."""
        return _seed_from(self.generator)


class _SingleProcessIter:
    def __init__(self, loader):
        self._requests = iter(loader._index_sampler) if not loader._iterable else None
        loader._base_seed()     # (unused here, but drawn as torch draws it for every iterator)
        self._fetcher = _Fetcher(loader.dataset, *loader._fetcher_args())

    def __iter__(self):
        return self

    def __next__(self):
        indices = next(self._requests) if self._requests is not None else None
        return self._fetcher.fetch(indices)


class _MultiProcessIter:
    def __init__(self, loader):
        context = loader.multiprocessing_context
        if context is None:
            context = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
        if isinstance(context, str) or context is None:
            context = multiprocessing.get_context(context)
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        self._in_order = loader.in_order
        self._result_queue = context.Queue()
        self._index_queues = []
        self._workers = []
        base_seed = loader._base_seed()
        for worker_id in range(loader.num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()
            worker = context.Process(
                target=_worker_loop, daemon=True,
                args=(loader.dataset, index_queue, self._result_queue, loader._fetcher_args(),
                      worker_id, loader.num_workers, base_seed + worker_id,
                      loader.worker_init_fn, os.getpid()))
            worker.start()
            self._index_queues.append(index_queue)
            self._workers.append(worker)
        self._shut_down = False
        self._start_epoch(loader, first=True)

    def _start_epoch(self, loader, first):
        if not first:
            self._drain()
            for index_queue in self._index_queues:
                index_queue.put(_NEW_EPOCH)
        self._requests = iter(loader._index_sampler) if not loader._iterable else None
        self._active = [True] * loader.num_workers    # False once an iterable worker ran out
        self._next_worker = itertools.cycle(range(loader.num_workers))
        self._send_idx = 0          # requests sent
        self._rcvd_idx = 0          # the next request whose result is due
        self._task_worker = {}      # request -> worker, while in flight
        self._results = {}          # results that arrived ahead of their turn
        for _ in range(loader.prefetch_factor * loader.num_workers):
            self._send_request()

    def __iter__(self):
        return self

    def _drain(self):
        """Collect and drop what is still in flight (a previous epoch left unfinished)."""
        for idx in self._results:
            self._task_worker.pop(idx, None)
        self._results = {}
        while self._task_worker:
            idx, _ = self._wait_for(None)
            self._task_worker.pop(idx, None)

    def _send_request(self):
        if not any(self._active):
            return
        if self._requests is not None:
            try:
                indices = next(self._requests)
            except StopIteration:
                return
        else:
            indices = None
        worker_id = next(self._next_worker)
        while not self._active[worker_id]:
            worker_id = next(self._next_worker)
        self._index_queues[worker_id].put((self._send_idx, indices))
        self._task_worker[self._send_idx] = worker_id
        self._send_idx += 1

    def __next__(self):
        while True:
            if not self._task_worker:                   # nothing in flight, nothing to send
                if not self._persistent:
                    self._shutdown()
                raise StopIteration
            if self._in_order:
                idx = self._rcvd_idx
                data = self._results.pop(idx) if idx in self._results else self._wait_for(idx)
                self._rcvd_idx += 1
            else:                                       # whichever batch is ready first
                idx, data = self._wait_for(None)
            worker_id = self._task_worker.pop(idx)
            if isinstance(data, _Exhausted):
                self._active[worker_id] = False
                continue
            self._send_request()
            if isinstance(data, _ExceptionWrapper):
                self._shutdown()
                data.reraise()
            return data

    def _wait_for(self, idx):
        """Read results until the one for request `idx` arrives, keeping the others.

        With idx None, return (request, result) of the first result to arrive.
        """
        start = time.monotonic()
        while True:
            wait = _POLL_SECONDS if self._timeout <= 0 else \
                min(_POLL_SECONDS, max(0.0, start + self._timeout - time.monotonic()))
            try:
                got, data = self._result_queue.get(timeout=wait)
            except queue.Empty:
                dead = [w.pid for w in self._workers if not w.is_alive()]
                if dead:
                    self._shutdown(force=True)
                    pids = ", ".join(str(p) for p in dead)
                    raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited "
                                       f"unexpectedly") from None
                if self._timeout > 0 and time.monotonic() - start >= self._timeout:
                    self._shutdown(force=True)
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} "
                                       f"seconds") from None
                continue
            if idx is None:
                return got, data
            if got == idx:
                return data
            self._results[got] = data

    def _shutdown(self, force=False):
        """Stop the workers: ask them to exit (or, after an error, stop them at once)."""
        if self._shut_down:
            return
        self._shut_down = True
        for index_queue in self._index_queues:
            try:
                index_queue.put(None)
            except (OSError, ValueError):
                pass
        for worker in self._workers:
            if not force:
                worker.join(timeout=_POLL_SECONDS * 5)
            if worker.is_alive():
                worker.terminate()
                worker.join(timeout=_POLL_SECONDS)
        for q in self._index_queues + [self._result_queue]:
            q.cancel_join_thread()
            q.close()

    def __del__(self):
        try:
            self._shutdown()
        except Exception:
            pass
