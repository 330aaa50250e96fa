"""torch.nn.parallel: DataParallel (one process) and DistributedDataParallel (MPI ranks), and
the pieces DataParallel is made of (scatter, replicate, parallel_apply, gather)."""
from .data_parallel import DataParallel, data_parallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401
from .parallel_apply import parallel_apply  # noqa: F401
from .replicate import replicate  # noqa: F401
from .scatter_gather import gather, scatter  # noqa: F401
