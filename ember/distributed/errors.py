"""torch.distributed's exception classes (all RuntimeErrors)."""


class DistError(RuntimeError):
    """An error in the distributed library."""


class DistBackendError(DistError):
    """An error in a backend (a collective that failed)."""


class DistNetworkError(DistError):
    """An error in the network between processes."""


class DistStoreError(DistError):
    """An error in a Store (a wait that timed out)."""


class QueueEmptyError(DistStoreError):
    """Store.queue_pop(block=False) on an empty queue."""
