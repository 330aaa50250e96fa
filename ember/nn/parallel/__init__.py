"""torch.nn.parallel: DataParallel (one process) and DistributedDataParallel (MPI ranks)."""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel
