"""ember.distributed: torch.distributed's API, run by MPI through mpi4py.

Install the `distributed` extra (mpi4py and the mpich wheel) and start a program with
`mpiexec -n N python prog.py` or `python -m ember.distributed.run --nproc-per-node N prog.py`.
Without the extra, ember imports as before and `init_process_group` says what to install.
Before a group is made, the calls that need one raise torch's ValueError.
See docs/distributed.md.
"""
from ._future import Future  # noqa: F401
from ._grad_bucket import GradBucket  # noqa: F401
from .distributed_c10d import _make_nccl_premul_sum  # noqa: F401
from .distributed_c10d import (  # noqa: F401 (the public API)
    Backend, GroupMember, P2POp, ProcessGroup, ReduceOp, Work, all_gather,
    all_gather_into_tensor, all_gather_object, all_reduce, all_to_all, all_to_all_single,
    barrier, batch_isend_irecv, broadcast, broadcast_object_list, default_pg_timeout,
    destroy_process_group, gather, gather_object, get_backend, get_global_rank, get_group_rank,
    get_process_group_ranks, get_rank, get_world_size, group, init_process_group, irecv,
    is_available, is_gloo_available, is_initialized, is_mpi_available, is_nccl_available,
    is_torchelastic_launched, isend, monitored_barrier, new_group, recv, reduce, reduce_scatter,
    reduce_scatter_tensor, scatter, scatter_object_list, send)
from . import algorithms  # noqa: E402,F401 (torch.distributed.algorithms; needs the above)
