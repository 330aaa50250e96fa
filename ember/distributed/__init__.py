"""ember.distributed: torch.distributed's API, run by MPI through mpi4py.

Install the `distributed` extra (mpi4py and the mpich wheel) and start a program with
`mpiexec -n N python prog.py` or `python -m ember.distributed.run --nproc-per-node N prog.py`.
Without the extra, ember imports as before and `init_process_group` says what to install.
Before a group is made, the calls that need one raise torch's ValueError.
See docs/distributed.md.
"""
import datetime as _datetime

from ..futures import Future  # noqa: F401
from ._grad_bucket import GradBucket  # noqa: F401
from ._options import (  # noqa: F401
    AllreduceCoalescedOptions, AllreduceOptions, AllToAllOptions, BackendConfig, BarrierOptions,
    BuiltinCommHookType,
    BroadcastOptions, DebugLevel, GatherOptions, ReduceOptions, ReduceScatterOptions,
    ScatterOptions, get_debug_level, set_debug_level, set_debug_level_from_env)
from ._store import FileStore, HashStore, PrefixStore, Store  # noqa: F401
from .errors import (  # noqa: F401
    DistBackendError, DistError, DistNetworkError, DistStoreError, QueueEmptyError)
from .distributed_c10d import (  # noqa: F401 (the public API)
    Backend, GroupMember, P2POp, ProcessGroup, ReduceOp, Work, _make_nccl_premul_sum,
    all_gather, all_gather_coalesced, all_gather_into_tensor, all_gather_object,
    all_gather_single, all_reduce, all_reduce_coalesced, all_to_all, all_to_all_single, barrier,
    batch_isend_irecv, breakpoint, broadcast, broadcast_object_list, default_pg_timeout,
    destroy_process_group, gather, gather_object, get_backend, get_backend_config,
    get_default_backend_for_device, get_global_rank, get_group_rank, get_node_local_rank,
    get_pg_count, get_process_group_ranks, get_rank, get_world_size, group, init_process_group,
    irecv, is_available, is_backend_available, is_gloo_available, is_initialized,
    is_mpi_available, is_nccl_available, is_torchelastic_launched, is_ucc_available,
    is_xccl_available, isend, log, monitored_barrier, new_group, new_subgroups,
    new_subgroups_by_enumeration, recv, recv_object_list, record_comm, reduce, reduce_op,
    reduce_scatter, reduce_scatter_single, reduce_scatter_tensor, scatter, scatter_object_list,
    send, send_object_list, shrink_group, split_group, supports_complex)

timedelta = _datetime.timedelta
RankType = int          # (torch: int | SymInt; ember has no symbolic sizes)
from . import algorithms  # noqa: E402,F401 (torch.distributed.algorithms; needs the above)
