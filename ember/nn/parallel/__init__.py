"""torch.nn.parallel: DataParallel (one process) and DistributedDataParallel (MPI ranks)."""
from .data_parallel import DataParallel, data_parallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401
