"""torch.nn.parallel: DataParallel (one process) and DistributedDataParallel (MPI ranks)."""
from .data_parallel import DataParallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401
