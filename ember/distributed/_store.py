"""Key-value stores (torch.distributed.Store): HashStore (in this process), FileStore (a file
several processes share) and PrefixStore (a namespace in another store).

ember's processes find each other through MPI, so it needs no store to start a job; these are
for programs that use a store themselves (counters, flags, small messages between ranks).
Values are bytes (a str is stored as its UTF-8 bytes); counters made by `add` are decimal text,
as in torch. A wait for keys gives up after the store's timeout with DistStoreError.
TCPStore is not provided (see tools/not_provided.toml).
"""
import contextlib
import datetime
import fcntl
import os
import pickle
import threading
import time

from .errors import DistStoreError, QueueEmptyError

_DEFAULT_TIMEOUT = datetime.timedelta(minutes=5)


def _bytes(value):
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, (list, tuple)):          # (torch accepts a list of byte values)
        return bytes(value)
    raise TypeError(f"incompatible value type {type(value).__name__} (expected str or bytes)")


class Store:
    """The interface: the operations below on a dict of bytes, kept by `_locked()`."""

    def __init__(self):
        self._timeout = _DEFAULT_TIMEOUT

    # a subclass provides _locked(): a context giving the dict to read and change
    def _locked(self):
        raise NotImplementedError("ember.distributed.Store is the interface: use HashStore, "
                                  "FileStore or PrefixStore")

    def _key(self, key):
        return key

    @property
    def timeout(self):
        return self._timeout

    def set_timeout(self, timeout):
        self._timeout = timeout

    def set(self, key, value):
        with self._locked() as data:
            data[self._key(key)] = _bytes(value)

    def get(self, key):
        self.wait([key])
        with self._locked() as data:
            return data[self._key(key)]

    def add(self, key, amount):
        with self._locked() as data:
            k = self._key(key)
            try:
                value = int(data.get(k, b"0")) + int(amount)
            except ValueError:
                raise ValueError("stoll") from None
            data[k] = str(value).encode()
            return value

    def append(self, key, value):
        with self._locked() as data:
            k = self._key(key)
            data[k] = data.get(k, b"") + _bytes(value)

    def compare_set(self, key, expected_value, desired_value):
        """Set `desired_value` if the key holds `expected_value` (or is absent and expected is
        empty); returns the value the key holds afterwards (or `expected_value` if absent)."""
        expected, desired = _bytes(expected_value), _bytes(desired_value)
        with self._locked() as data:
            k = self._key(key)
            if k not in data:
                if expected:
                    return expected
                data[k] = desired
                return desired
            if data[k] == expected:
                data[k] = desired
            return data[k]

    def multi_get(self, keys):
        self.wait(keys)
        with self._locked() as data:
            return [data[self._key(k)] for k in keys]

    def multi_set(self, keys, values):
        with self._locked() as data:
            for k, v in zip(keys, values):
                data[self._key(k)] = _bytes(v)

    def check(self, keys):
        with self._locked() as data:
            return all(self._key(k) in data for k in keys)

    def delete_key(self, key):
        with self._locked() as data:
            return data.pop(self._key(key), None) is not None

    def num_keys(self):
        with self._locked() as data:
            return len(data)

    def list_keys(self):
        with self._locked() as data:
            return list(data)

    def wait(self, keys, timeout=None):
        limit = (self._timeout if timeout is None else timeout).total_seconds()
        deadline = time.monotonic() + limit
        while not self.check(keys):
            if time.monotonic() > deadline:
                raise DistStoreError("Wait timeout")
            time.sleep(0.001)

    def has_extended_api(self):
        return True

    # queues: a key holding a list of values (pickled), pushed at the back, popped at the front
    def queue_push(self, key, value):
        with self._locked() as data:
            k = self._key(key)
            items = pickle.loads(data[k]) if k in data else []
            data[k] = pickle.dumps(items + [_bytes(value)])

    def queue_pop(self, key, block=True):
        deadline = time.monotonic() + self._timeout.total_seconds()
        while True:
            with self._locked() as data:
                k = self._key(key)
                items = pickle.loads(data[k]) if k in data else []
                if items:
                    data[k] = pickle.dumps(items[1:])
                    return items[0]
            if not block:
                raise QueueEmptyError("queue is empty")
            if time.monotonic() > deadline:
                raise DistStoreError("Wait timeout")
            time.sleep(0.001)

    def queue_len(self, key):
        with self._locked() as data:
            k = self._key(key)
            return len(pickle.loads(data[k])) if k in data else 0


class HashStore(Store):
    """A store in this process's memory (threads share it)."""

    def __init__(self):
        super().__init__()
        self._data = {}
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _locked(self):
        with self._lock:
            yield self._data


class FileStore(Store):
    """A store in a file: every process (on this machine or a shared file system) that opens
    the same path sees the same keys. Each operation holds an exclusive lock on the file."""

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        self.path = file_name
        self.world_size = world_size
        with open(file_name, "ab"):
            pass

    @contextlib.contextmanager
    def _locked(self):
        with open(self.path, "r+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                raw = f.read()
                data = pickle.loads(raw) if raw else {}
                before = dict(data)
                yield data
                if data != before:
                    f.seek(0)
                    f.truncate()
                    f.write(pickle.dumps(data))
                    f.flush()
                    os.fsync(f.fileno())
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)


    # torch's FileStore differs from the other stores in these (kept, so programs see torch's)
    def num_keys(self):
        return super().num_keys() + 1       # (torch counts its reference-count key too)

    def delete_key(self, key):
        super().delete_key(key)
        return True

    def has_extended_api(self):
        return False

    def get(self, key):
        try:
            Store.wait(self, [key])
        except DistStoreError:
            raise RuntimeError(f"Timeout waiting for key: {key} after "
                               f"{int(self._timeout.total_seconds() * 1000)} ms") from None
        with self._locked() as data:
            return data[key]

    def wait(self, keys, timeout=None):
        try:
            super().wait(keys, timeout)
        except DistStoreError:
            raise RuntimeError("Wait timeout") from None

    def queue_push(self, key, *args, **kwargs):
        raise NotImplementedError("queue support is not implemented.")

    queue_pop = queue_len = queue_push


class PrefixStore(Store):
    """Another store's keys under "prefix/" (num_keys counts the underlying store's keys)."""

    def __init__(self, prefix, store):
        super().__init__()
        self.underlying_store = store
        self._prefix = prefix

    def _locked(self):
        return self.underlying_store._locked()

    def _key(self, key):
        return f"{self._prefix}/{key}"

    @property
    def timeout(self):
        return self.underlying_store.timeout

    def set_timeout(self, timeout):
        self.underlying_store.set_timeout(timeout)

    def wait(self, keys, timeout=None):
        Store.wait(self, keys, self.underlying_store.timeout if timeout is None else timeout)
