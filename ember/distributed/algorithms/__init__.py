"""torch.distributed.algorithms: Join for uneven inputs, and DDP's communication hooks."""
from .join import Join, JoinHook, Joinable  # noqa: F401 (the public API)
