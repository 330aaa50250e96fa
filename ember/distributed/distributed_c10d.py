"""torch.distributed's process groups and collectives, run by MPI (mpi4py).

Every process of the job is one MPI rank; the default group is MPI_COMM_WORLD and `new_group`
makes sub-communicators. Both backend names a torch program uses on CPU, "mpi" and "gloo", run
on this engine. A collective copies its tensor into a contiguous NumPy buffer, starts the
non-blocking MPI call (Iallreduce, Ibcast, ...) and returns a Work; a blocking call is that
Work waited on at once. The result is written back into the caller's tensors in place (so
views and non-contiguous tensors get it as in torch). Waits give up after the group's timeout
and stop the job (see _mpi.wait).
"""
import contextlib
import datetime
import enum
import logging
import os
import pdb
import sys
import warnings

import numpy as np

from ..autograd import grad_mode
from .._tensor import Tensor
from . import _mpi
from . import _objects
from ..futures import Future
from ._options import BackendConfig, PybindEnumNames, ReduceOp

default_pg_timeout = datetime.timedelta(minutes=30)

_NO_GROUP = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")


def _make_nccl_premul_sum(factor):
    """ReduceOp.PREMUL_SUM with its factor: a sum of every rank's tensor times `factor`. torch
    runs it on NCCL only (gloo raises); ember's "mpi" backend runs it."""
    op = ReduceOp(ReduceOp.PREMUL_SUM)
    op._factor = factor
    return op


class Backend:
    """Backend names: `Backend("GLOO")` is the string "gloo", as torch's. The lists name torch's
    backends and the devices torch gives each (descriptions a program may read); which of them
    run here is `is_backend_available` (in ember: "gloo" and "mpi", both on MPI)."""
    UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI, FAKE = ("undefined", "gloo", "nccl", "xccl", "ucc",
                                                   "mpi", "fake")
    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI, FAKE]
    backend_capability = {GLOO: ["cpu", "cuda"], NCCL: ["cuda"], XCCL: ["xpu"],
                          UCC: ["cpu", "cuda"], MPI: ["cpu", "cuda"],
                          FAKE: ["cpu", "cuda", "hpu", "xpu"]}
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL, "mps": GLOO}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        return name.lower()

    @classmethod
    def register_backend(cls, name, func, extended_api=False, devices=None):
        # (a third-party backend is a C++ process group class; ember's groups are MPI's)
        raise RuntimeError(f"ember.distributed runs its collectives on MPI: a backend "
                           f"registered as a process-group class ({name!r}) cannot run here")


class _BackendType(PybindEnumNames, enum.IntEnum):
    """ProcessGroup.BackendType, as torch numbers it."""
    UNDEFINED = 0
    GLOO = 1
    NCCL = 2
    UCC = 3
    MPI = 4
    XCCL = 5
    CUSTOM = 6


_BackendType.__qualname__ = "ProcessGroup.BackendType"
Backend.backend_type_map = {name: _BackendType[name.upper()] for name in Backend.backend_list
                            if name != Backend.FAKE}
Backend.backend_type_map[Backend.FAKE] = _BackendType.CUSTOM


class ProcessGroup:
    """A set of ranks and the MPI communicator that connects them."""
    BackendType = _BackendType

    def __init__(self, comm, ranks, backend, timeout):
        self._comm = comm
        self._ranks = list(ranks)           # global rank of each group rank
        self._backend = backend
        self._timeout = timeout

    def rank(self):
        return self._comm.Get_rank()

    def size(self):
        return self._comm.Get_size()

    def name(self):
        return self._backend

    def __repr__(self):
        return f"<ember.distributed.ProcessGroup {self._backend} ranks={self._ranks}>"


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = -100


group = GroupMember
_groups = []        # every group made, so destroy_process_group frees their communicators
_pg_count = [0]     # groups made, on every rank (get_pg_count)


class Work:
    """An operation in flight: wait() blocks (up to the group's timeout) and writes the result
    into the output tensors; is_completed() asks without blocking."""

    def __init__(self, requests, finish, pg, what, outputs=(), keep=(), spin=None):
        self._requests = list(requests)
        self._spin = spin               # (see _mpi.spin_for; None: the default)
        self._finish = finish
        self._pg = pg
        self._what = what
        self._outputs = list(outputs)
        self._keep = keep               # buffers MPI reads or writes until completion
        self._done = False
        self._source = None
        self._has_future = True         # (torch's gloo gives no future for p2p, reduce_scatter)

    def _complete(self):
        if not self._done:
            self._done = True
            if self._finish is not None:
                self._finish()
            self._keep = None

    def wait(self, timeout=None):
        if not self._done:
            limit = self._pg._timeout if timeout is None else timeout
            for req in self._requests:
                _mpi.wait(req, limit, self._what, self._spin)
            self._complete()
        return True

    def is_completed(self):
        if not self._done and all(req.Test() for req in self._requests):
            self._complete()
        return self._done

    def is_success(self):
        return self.is_completed()

    def result(self):
        self.wait()
        return self._outputs

    def source_rank(self):
        self.wait()
        return self._source

    def exception(self):
        return None

    def get_future(self):
        """A Future completed with the output tensors (a list) when this work completes."""
        if not self._has_future:
            raise RuntimeError("Work::getFuture not implemented.")
        return Future._of_work(self)

    def synchronize(self):
        self.wait()


# ------------------------------------------------------------------ the default group
def is_available():
    return True


def is_initialized():
    return GroupMember.WORLD is not None


def is_mpi_available():
    """True when mpi4py imports: MPI is ember's engine, so every collective needs it. (A
    deliberate difference: torch's CPU wheel is built without MPI and answers False.)"""
    if _mpi_importable[0] is None:
        _mpi_importable[0] = _mpi.importable() is not None
    return _mpi_importable[0]


_mpi_importable = [None]


def is_gloo_available():
    """ember's "gloo" runs on MPI: available exactly when MPI is."""
    return is_mpi_available()


def is_nccl_available():
    return False


def is_torchelastic_launched():
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def _world():
    if GroupMember.WORLD is None:
        raise ValueError(_NO_GROUP)
    return GroupMember.WORLD


def _pg(group):
    return _world() if group is None else group


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the job's default group. The processes are MPI's ranks (started by mpiexec or
    `python -m ember.distributed.run`); world_size and rank, when given, must agree with it."""
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = "gloo" if backend is None else str(backend).lower()
    if name not in ("mpi", "gloo", "cpu:gloo", "undefined"):
        raise RuntimeError(f"ember.distributed runs the 'mpi' and 'gloo' backends (both on "
                           f"MPI); backend {backend!r} is not available")
    if init_method is not None and not (init_method.startswith("env://")
                                        or init_method.startswith("mpi://")):
        raise ValueError(f"ember.distributed: init_method {init_method!r} is not supported; "
                         f"use env:// (the default) under mpiexec or ember.distributed.run")
    MPI = _mpi.load()
    comm = MPI.COMM_WORLD.Dup()
    size, me = comm.Get_size(), comm.Get_rank()
    env_size, env_rank = os.environ.get("WORLD_SIZE"), os.environ.get("RANK")
    for given, actual, what in ((world_size, size, "world_size"), (rank, me, "rank"),
                                (env_size, size, "WORLD_SIZE"), (env_rank, me, "RANK")):
        if given is not None and int(given) != -1 and int(given) != actual:
            raise RuntimeError(
                f"ember.distributed: {what}={given} but MPI started this process as rank "
                f"{me} of {size}; start the job with `mpiexec -n N` or "
                f"`python -m ember.distributed.run --nproc-per-node N` (a process spawned "
                f"otherwise cannot join)")
    if timeout is None:
        timeout = default_pg_timeout
    _mpi.set_spin_for(comm)
    _mpi.install_excepthook()
    GroupMember.WORLD = ProcessGroup(comm, range(size), "gloo" if name != "mpi" else "mpi",
                                     timeout)
    _groups.append(GroupMember.WORLD)
    _pg_count[0] = 1


def destroy_process_group(group=None):
    global _groups
    if group is None or group is GroupMember.WORLD:
        if GroupMember.WORLD is None:
            raise AssertionError("Process group cannot be None")
        for pg in _groups:
            pg._comm.Free()
        _groups = []
        GroupMember.WORLD = None
        _pg_count[0] = 0
    else:
        group._comm.Free()
        _groups.remove(group)
        _pg_count[0] -= 1


def get_rank(group=None):
    pg = _pg(group)
    if pg is GroupMember.NON_GROUP_MEMBER:
        return -1
    return pg.rank()


def get_world_size(group=None):
    pg = _pg(group)
    if pg is GroupMember.NON_GROUP_MEMBER:
        return -1
    return pg.size()


def get_backend(group=None):
    return _pg(group)._backend


def get_process_group_ranks(group):
    return list(_pg(group)._ranks)


def get_global_rank(group, group_rank):
    return _pg(group)._ranks[group_rank]


def get_group_rank(group, global_rank):
    pg = _pg(group)
    if global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._ranks.index(global_rank)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A group of some ranks; every rank of the default group must call it (as in torch).
    Ranks outside it get GroupMember.NON_GROUP_MEMBER."""
    world = _world()
    ranks = sorted(range(world.size()) if ranks is None else ranks)
    _pg_count[0] += 1
    if world.rank() not in ranks:
        # MPI_Comm_create_group is collective over the new group's members only
        return GroupMember.NON_GROUP_MEMBER
    sub = world._comm.Create_group(world._comm.Get_group().Incl(ranks))
    pg = ProcessGroup(sub, ranks, world._backend if backend is None else str(backend).lower(),
                      world._timeout if timeout is None else timeout)
    _groups.append(pg)
    return pg


# ------------------------------------------------------------------ buffers
def _member(pg):
    if pg is GroupMember.NON_GROUP_MEMBER:
        return False
    return True


def _host(t):
    """`t`'s values as a fresh C-contiguous NumPy array (so MPI may read it after `t` changes)."""
    _check_tensor(t)
    return np.array(t.detach()._host(), order="C", copy=True)


def _own_memory(t):
    """`t`'s own NumPy array when MPI can reduce into it in place (a CPU tensor whose memory is
    one C-contiguous writeable block), else None. This saves the copy in and the copy out,
    which cost as much as the transfer itself for large tensors."""
    _check_tensor(t)
    data = t._data
    if t._device.type == "cpu" and data.__class__ is np.ndarray and \
            data.flags.c_contiguous and data.flags.writeable:
        return data
    return None


def _check_tensor(t):
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `tensor` of type "
                        f"torch.Tensor\n             but got {type(t)} instead.")


def _buf(array, dtype, parts=1):
    """mpi4py's [buffer, count, datatype] for an array of ember dtype `dtype` holding `parts`
    equal blocks, one per rank (the count is per block, as MPI's gathers and scatters want)."""
    mpitype, native = _mpi.datatype(dtype)
    if native:
        return [array, array.size // parts, mpitype]
    return [array.view(np.uint8), array.size // parts, mpitype]


def _write(t, array):
    """Write `array` into `t` in place (a view or strided tensor included). As in torch, a
    collective's write is not an autograd in-place op: the version counter stays."""
    if t._device.type == "cpu" and t._data.__class__ is np.ndarray and t._data.flags.writeable:
        np.copyto(t._data, np.asarray(array).reshape(t._data.shape), casting="unsafe")
        return
    with grad_mode.no_grad():
        t.copy_(Tensor._make(np.asarray(array, dtype=t.dtype.np).reshape(tuple(t.shape)),
                             t.dtype))


def _op_name(op):
    if isinstance(op, ReduceOp):
        op = op.op
    try:
        return ReduceOp.RedOpType(int(op)).name
    except (TypeError, ValueError):
        raise TypeError(f"ember.distributed: {op!r} is not a ReduceOp") from None


def _reduce_op(op, pg, tensor):
    """The op's name, checked against the tensor's dtype and the group's backend, and
    PREMUL_SUM's factor (None for the others): PREMUL_SUM reduces as SUM of the premultiplied
    values."""
    name = _op_name(op)
    if name == "PREMUL_SUM":
        if not isinstance(op, ReduceOp) or op._factor is None:
            # (torch's pybind refuses the bare enum member: it wants a ReduceOp object)
            raise TypeError("(): incompatible function arguments. The following argument types "
                            "are supported:\n    1. (self: torch._C._distributed_c10d."
                            "AllreduceOptions, arg0: torch._C._distributed_c10d.ReduceOp) -> "
                            f"None\n\nInvoked with: {op!r}")
        if pg._backend != "mpi":
            raise RuntimeError("Cannot use ReduceOp.PREMUL_SUM with Gloo")
        factor = op._factor.item() if isinstance(op._factor, Tensor) else op._factor
        _mpi.check_op("SUM", tensor.dtype)
        return "SUM", factor
    _mpi.check_op(name, tensor.dtype)
    return name, None


def _premultiply(buf, factor, dtype):
    if factor is not None:
        buf[...] = (buf * factor).astype(buf.dtype)


def _average(array, dtype, n):
    if dtype._half:
        return (array.astype(np.float32) / n).astype(dtype.np)
    return (array / n).astype(dtype.np)


def _group_rank(pg, global_rank, what):
    if global_rank not in pg._ranks:
        if pg is GroupMember.WORLD:
            raise RuntimeError(f"ProcessGroupGloo::{what}: invalid root rank: {global_rank}")
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._ranks.index(global_rank)


def _run(work, async_op):
    if async_op:
        return work
    work.wait()
    return None


# ------------------------------------------------------------------ collectives
def barrier(group=None, async_op=False, device_ids=None):
    pg = _pg(group)
    if not _member(pg):
        return None
    return _run(Work([pg._comm.Ibarrier()], None, pg, "barrier"), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    pg = _pg(group)
    Work([pg._comm.Ibarrier()], None, pg, "monitored_barrier").wait(timeout)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    pg = _pg(group)
    if pg is GroupMember.NON_GROUP_MEMBER:
        return None
    _check_tensor(tensor)
    dtype = tensor.dtype
    name, mpiop, factor = _all_reduce_op(op, pg, tensor)
    own = _own_memory(tensor)
    buf = own if own is not None else _host(tensor)
    _premultiply(buf, factor, dtype)
    requests = _iallreduce(pg._comm, buf, dtype, mpiop)

    def finish():
        if own is None:
            _write(tensor, _average(buf, dtype, pg.size()) if name == "AVG" else buf)
        elif name == "AVG":
            if dtype._half:
                own[...] = _average(own, dtype, pg.size())
            else:
                np.divide(own, pg.size(), out=own)
    spin = _mpi.spin_for(buf.nbytes)
    if async_op:
        return Work(requests, finish, pg, "all_reduce", [tensor], (buf,), spin)
    # the blocking call waits here, without a Work (this is the per-call cost of small
    # all-reduces: bench/bench_distributed.py)
    for req in requests:
        _mpi.wait(req, pg._timeout, "all_reduce", spin)
    finish()
    return None


_PLAIN_OPS = {}     # (ReduceOp member, dtype) -> (name, MPI op), once its checks have passed


def _all_reduce_op(op, pg, tensor):
    """(ReduceOp name, MPI op, PREMUL_SUM's factor or None) for reducing `tensor` by `op`; a
    plain member (ReduceOp.SUM, ...) is checked once per dtype."""
    if op.__class__ is ReduceOp.RedOpType:
        found = _PLAIN_OPS.get((op, tensor.dtype))
        if found is not None:
            return found + (None,)
    name, factor = _reduce_op(op, pg, tensor)
    mpiop = _mpi.mpi_op(name, tensor.dtype)
    if op.__class__ is ReduceOp.RedOpType:
        _PLAIN_OPS[(op, tensor.dtype)] = (name, mpiop)
    return name, mpiop, factor


# MPICH all-reduces a large message through a scratch buffer as large as the message, and
# glibc serves each allocation of 32 MB or more with a fresh mmap, so every call page-faults
# that much new memory (at 64 MB: about a third of the call). Above _CHUNK_BYTES the buffer
# goes as chunks, all started at once: their scratch buffers come from the heap and are reused.
_CHUNK_BYTES = 16 << 20


def _iallreduce(comm, buf, dtype, mpiop):
    """Start all-reducing the C-contiguous array `buf` in place; its MPI requests."""
    flat = buf.reshape(-1)
    step = max(1, _CHUNK_BYTES // dtype.itemsize)
    in_place = _mpi.MPI.IN_PLACE
    if flat.size <= step:
        return [comm.Iallreduce(in_place, _buf(flat, dtype), mpiop)]
    return [comm.Iallreduce(in_place, _buf(flat[i:i + step], dtype), mpiop)
            for i in range(0, flat.size, step)]


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    pg = _pg(group)
    if not _member(pg):
        return None
    root = group_dst if group_dst is not None else _group_rank(pg, dst, "reduce")
    _check_tensor(tensor)
    (name, factor), dtype = _reduce_op(op, pg, tensor), tensor.dtype
    send = _host(tensor)
    _premultiply(send, factor, dtype)
    recv = np.empty_like(send)
    req = pg._comm.Ireduce(_buf(send, dtype), _buf(recv, dtype), _mpi.mpi_op(name, dtype), root)

    def finish():
        if pg.rank() == root:
            _write(tensor, _average(recv, dtype, pg.size()) if name == "AVG" else recv)
    return _run(Work([req], finish, pg, "reduce", [tensor], (send, recv)), async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    pg = _pg(group)
    if not _member(pg):
        return None
    root = group_src if group_src is not None else _group_rank(pg, src, "broadcast")
    buf = _host(tensor)
    req = pg._comm.Ibcast(_buf(buf, tensor.dtype), root)

    def finish():
        if pg.rank() != root:
            _write(tensor, buf)
    return _run(Work([req], finish, pg, "broadcast", [tensor], (buf,)), async_op)


def _check_same(tensors, like, what):
    for t in tensors:
        _check_tensor(t)
        if t.dtype != like.dtype:
            raise ValueError(f"{what}: tensors must all have the same type")
        if t.numel() != like.numel():
            raise RuntimeError(f"{what}: every tensor must have the same number of elements "
                               f"({t.numel()} != {like.numel()})")


def all_gather(tensor_list, tensor, group=None, async_op=False):
    pg = _pg(group)
    if not _member(pg):
        return None
    n = pg.size()
    if len(tensor_list) != n:
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors, the group "
                         f"has {n} ranks")
    _check_same(tensor_list, tensor, "all_gather")
    send = _host(tensor)
    recv = np.empty((n,) + send.shape, dtype=send.dtype)
    req = pg._comm.Iallgather(_buf(send, tensor.dtype), _buf(recv, tensor.dtype, n))

    def finish():
        for out, part in zip(tensor_list, recv):
            _write(out, part)
    return _run(Work([req], finish, pg, "all_gather", tensor_list, (send, recv)), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    warnings.warn("`torch.distributed.all_gather_into_tensor` is deprecated. Please use "
                  "`torch.distributed.all_gather_single` instead.", FutureWarning, stacklevel=2)
    return all_gather_single(output_tensor, input_tensor, group, async_op)


def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's input_tensor, concatenated in rank order into output_tensor."""
    pg = _pg(group)
    if not _member(pg):
        return None
    n = pg.size()
    if output_tensor.numel() != n * input_tensor.numel():
        raise ValueError(f"output tensor size must be equal to world_size times input tensor "
                         f"size ({output_tensor.numel()} != {n} * {input_tensor.numel()})")
    if output_tensor.dtype != input_tensor.dtype:
        raise ValueError("output tensor must have the same type as input tensor")
    send = _host(input_tensor)
    recv = np.empty(n * send.size, dtype=send.dtype)
    req = pg._comm.Iallgather(_buf(send, input_tensor.dtype),
                                 _buf(recv, input_tensor.dtype, n))
    return _run(Work([req], lambda: _write(output_tensor, recv), pg, "all_gather_single",
                     [output_tensor], (send, recv)), async_op)


def _reduce_scatter_flat(output, send, name, dtype, pg, what, outputs):
    _mpi.check_op(name, dtype)
    recv = np.empty(output.numel(), dtype=dtype.np)
    req = pg._comm.Ireduce_scatter_block(_buf(send, dtype, pg.size()), _buf(recv, dtype),
                                         _mpi.mpi_op(name, dtype))

    def finish():
        _write(output, _average(recv, dtype, pg.size()) if name == "AVG" else recv)
    work = Work([req], finish, pg, what, outputs, (send, recv))
    work._has_future = False
    return work


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    pg = _pg(group)
    if not _member(pg):
        return None
    if len(input_list) != pg.size():
        raise ValueError(f"reduce_scatter: input_list has {len(input_list)} tensors, the group "
                         f"has {pg.size()} ranks")
    _check_same(input_list, output, "reduce_scatter")
    send = np.concatenate([_host(t).reshape(-1) for t in input_list])
    return _run(_reduce_scatter_flat(output, send, _op_name(op), output.dtype, pg,
                                     "reduce_scatter", [output]), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    warnings.warn("`torch.distributed.reduce_scatter_tensor` is deprecated. Please use "
                  "`torch.distributed.reduce_scatter_single` instead.", FutureWarning,
                  stacklevel=2)
    return reduce_scatter_single(output, input, op, group, async_op)


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """The reduction of every rank's input; rank k keeps block k of it in output."""
    pg = _pg(group)
    if not _member(pg):
        return None
    if input.numel() != pg.size() * output.numel():
        raise ValueError(f"input tensor must be the same size as output size times world size "
                         f"({input.numel()} != {pg.size()} * {output.numel()})")
    if input.dtype != output.dtype:
        raise ValueError("input tensor must be the same type as the output tensor.")
    send = _host(input).reshape(-1)
    return _run(_reduce_scatter_flat(output, send, _op_name(op), output.dtype, pg,
                                     "reduce_scatter_single", [output]), async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    pg = _pg(group)
    if not _member(pg):
        return None
    root = group_dst if group_dst is not None else _group_rank(pg, 0 if dst is None else dst,
                                                              "gather")
    n, me = pg.size(), pg.rank()
    if me == root:
        if gather_list is None or len(gather_list) != n:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _check_same(gather_list, tensor, "gather")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    send = _host(tensor)
    recv = np.empty((n,) + send.shape, dtype=send.dtype) if me == root else None
    req = pg._comm.Igather(_buf(send, tensor.dtype),
                           _buf(recv, tensor.dtype, n) if recv is not None else None, root)

    def finish():
        if me == root:
            for out, part in zip(gather_list, recv):
                _write(out, part)
    return _run(Work([req], finish, pg, "gather", gather_list or [], (send, recv)), async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    pg = _pg(group)
    if not _member(pg):
        return None
    root = group_src if group_src is not None else _group_rank(pg, 0 if src is None else src,
                                                              "scatter")
    n, me = pg.size(), pg.rank()
    if me == root:
        if scatter_list is None or len(scatter_list) != n:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _check_same(scatter_list, tensor, "scatter")
        send = np.stack([_host(t).reshape(tensor.shape) for t in scatter_list])
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source "
                             "ranks.")
        send = None
    recv = np.empty(tuple(tensor.shape), dtype=tensor.dtype.np)
    req = pg._comm.Iscatter(_buf(send, tensor.dtype, n) if send is not None else None,
                            _buf(recv, tensor.dtype), root)
    return _run(Work([req], lambda: _write(tensor, recv), pg, "scatter", [tensor],
                     (send, recv)), async_op)


def _alltoallv(pg, send, send_counts, recv_counts, dtype, finish_with, what, outputs):
    send_displs = np.concatenate([[0], np.cumsum(send_counts)[:-1]]).astype(int).tolist()
    recv_displs = np.concatenate([[0], np.cumsum(recv_counts)[:-1]]).astype(int).tolist()
    recv = np.empty(int(sum(recv_counts)), dtype=dtype.np)
    mpitype, native = _mpi.datatype(dtype)
    sview = send if native else send.view(np.uint8)
    rview = recv if native else recv.view(np.uint8)
    req = pg._comm.Ialltoallv([sview, (list(send_counts), send_displs), mpitype],
                              [rview, (list(recv_counts), recv_displs), mpitype])
    return Work([req], lambda: finish_with(recv, recv_displs), pg, what, outputs, (send, recv))


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    pg = _pg(group)
    if not _member(pg):
        return None
    n = pg.size()
    if len(output_tensor_list) != n or len(input_tensor_list) != n:
        raise ValueError(f"all_to_all: both lists need {n} tensors (one per rank)")
    dtype = input_tensor_list[0].dtype
    for t in list(output_tensor_list) + list(input_tensor_list):
        _check_tensor(t)
        if t.dtype != dtype:
            raise ValueError("all_to_all: tensors must all have the same type")
    send = np.concatenate([_host(t).reshape(-1) for t in input_tensor_list])
    send_counts = [t.numel() for t in input_tensor_list]
    recv_counts = [t.numel() for t in output_tensor_list]

    def finish(recv, displs):
        for out, start, count in zip(output_tensor_list, displs, recv_counts):
            _write(out, recv[start:start + count])
    return _run(_alltoallv(pg, send, send_counts, recv_counts, dtype, finish, "all_to_all",
                           output_tensor_list), async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    pg = _pg(group)
    if not _member(pg):
        return None
    n = pg.size()
    if output.dtype != input.dtype:
        raise ValueError("all_to_all_single: output and input must have the same type")
    row_in = input.numel() // max(input.shape[0], 1) if input.dim() else 1
    row_out = output.numel() // max(output.shape[0], 1) if output.dim() else 1

    def counts(splits, tensor, row):
        if splits is None:
            if tensor.shape[0] % n:
                raise ValueError(f"all_to_all_single: dim 0 ({tensor.shape[0]}) must divide "
                                 f"by the group size {n} when no split sizes are given")
            return [tensor.shape[0] // n * row] * n
        if len(splits) != n or sum(splits) != tensor.shape[0]:
            raise ValueError(f"all_to_all_single: split sizes {list(splits)} must be {n} "
                             f"numbers adding up to dim 0 ({tensor.shape[0]})")
        return [int(s) * row for s in splits]
    send_counts = counts(input_split_sizes, input, row_in)
    recv_counts = counts(output_split_sizes, output, row_out)
    send = _host(input).reshape(-1)
    return _run(_alltoallv(pg, send, send_counts, recv_counts, input.dtype,
                           lambda recv, displs: _write(output, recv), "all_to_all_single",
                           [output]), async_op)


# ------------------------------------------------------------------ point to point
def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    pg = _pg(group)
    peer = group_dst if group_dst is not None else _group_rank(pg, dst, "send")
    buf = _host(tensor)
    req = pg._comm.Isend(_buf(buf, tensor.dtype), peer, tag)
    work = Work([req], None, pg, "send", [tensor], (buf,))
    work._has_future = False
    return work


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    pg = _pg(group)
    MPI = _mpi.MPI
    if group_src is not None:
        peer = group_src
    else:
        peer = MPI.ANY_SOURCE if src is None else _group_rank(pg, src, "recv")
    buf = np.empty(tuple(tensor.shape), dtype=tensor.dtype.np)
    status = MPI.Status()
    req = pg._comm.Irecv(_buf(buf, tensor.dtype), peer, tag)
    work = Work([req], None, pg, "recv", [tensor], (buf,))
    work._has_future = False

    def finish():
        _write(tensor, buf)
        work._source = pg._ranks[status.Get_source()] if peer == MPI.ANY_SOURCE else \
            pg._ranks[peer]
    work._finish = finish
    # the status of the completed request tells who sent (for src=None)
    work._requests = [_StatusRequest(req, status)]
    return work


class _StatusRequest:
    """An MPI request whose completion status is kept (the sender of a recv from any rank)."""

    def __init__(self, req, status):
        self._req, self._status = req, status

    def Test(self):
        return self._req.Test(self._status)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    isend(tensor, dst, group, tag, group_dst).wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into `tensor`; returns the sender's rank."""
    work = irecv(tensor, src, group, tag, group_src)
    work.wait()
    return work._source


class P2POp:
    """One isend or irecv for batch_isend_irecv."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag


def batch_isend_irecv(p2p_op_list):
    return [p.op(p.tensor, p.peer, p.group, p.tag) for p in p2p_op_list]


# ------------------------------------------------------------------ objects
def _bytes_of(obj):
    return np.frombuffer(_objects.dumps(obj), dtype=np.uint8)


def _wait(pg, req, what):
    _mpi.wait(req, pg._timeout, what)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    pg = _pg(group)
    if not _member(pg):
        return
    root = group_src if group_src is not None else _group_rank(pg, 0 if src is None else src,
                                                              "broadcast")
    me = pg.rank()
    parts = [_bytes_of(o) for o in object_list] if me == root else []
    sizes = np.array([p.size for p in parts] if me == root else [0] * len(object_list),
                     dtype=np.int64)
    _wait(pg, pg._comm.Ibcast(sizes, root), "broadcast_object_list")
    data = np.concatenate(parts) if me == root and parts else np.empty(int(sizes.sum()),
                                                                      dtype=np.uint8)
    _wait(pg, pg._comm.Ibcast(data, root), "broadcast_object_list")
    if me != root:
        offset = 0
        for i, size in enumerate(sizes.tolist()):
            object_list[i] = _objects.loads(data[offset:offset + size].tobytes())
            offset += size


def _gather_bytes(pg, obj, root, what):
    """Every rank's pickled `obj` at `root` (all ranks when root is None)."""
    mine = _bytes_of(obj)
    n = pg.size()
    sizes = np.zeros(n, dtype=np.int64)
    size = np.array([mine.size], dtype=np.int64)
    if root is None:
        _wait(pg, pg._comm.Iallgather(size, sizes), what)
    else:
        _wait(pg, pg._comm.Igather(size, sizes if pg.rank() == root else None, root), what)
    displs = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()
    data = np.empty(int(sizes.sum()), dtype=np.uint8)
    spec = [data, (sizes.tolist(), displs), _mpi.MPI.BYTE]
    if root is None:
        _wait(pg, pg._comm.Iallgatherv(mine, spec), what)
    else:
        _wait(pg, pg._comm.Igatherv(mine, spec if pg.rank() == root else None, root), what)
    if root is not None and pg.rank() != root:
        return None
    return [_objects.loads(data[d:d + s].tobytes()) for d, s in zip(displs, sizes.tolist())]


def all_gather_object(object_list, obj, group=None):
    pg = _pg(group)
    if not _member(pg):
        return
    for i, o in enumerate(_gather_bytes(pg, obj, None, "all_gather_object")):
        object_list[i] = o


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    pg = _pg(group)
    if not _member(pg):
        return
    root = group_dst if group_dst is not None else _group_rank(pg, 0 if dst is None else dst,
                                                              "gather")
    received = _gather_bytes(pg, obj, root, "gather_object")
    if pg.rank() == root:
        for i, o in enumerate(received):
            object_gather_list[i] = o


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    pg = _pg(group)
    if not _member(pg):
        return
    root = group_src if group_src is not None else _group_rank(pg, 0 if src is None else src,
                                                              "scatter")
    me = pg.rank()
    what = "scatter_object_list"
    if me == root:
        parts = [_bytes_of(o) for o in scatter_object_input_list]
        sizes = np.array([p.size for p in parts], dtype=np.int64)
        data = np.concatenate(parts)
        displs = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()
    size = np.zeros(1, dtype=np.int64)
    _wait(pg, pg._comm.Iscatter(sizes if me == root else None, size, root), what)
    mine = np.empty(int(size[0]), dtype=np.uint8)
    send = [data, (sizes.tolist(), displs), _mpi.MPI.BYTE] if me == root else None
    _wait(pg, pg._comm.Iscatterv(send, mine, root), what)
    scatter_object_output_list[0] = _objects.loads(mine.tobytes())


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None,
                     use_batch=False):
    """Send picklable objects to rank `dst` (which calls recv_object_list with a list as long)."""
    pg = _pg(group)
    peer = group_dst if group_dst is not None else _group_rank(pg, dst, "send")
    if peer == pg.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the same as "
                         "the rank of the current process.")
    parts = [_bytes_of(o) for o in object_list]
    sizes = np.array([p.size for p in parts], dtype=np.int64)
    data = np.concatenate(parts) if parts else np.empty(0, np.uint8)
    _wait(pg, pg._comm.Isend(sizes, peer, _OBJECT_TAG), "send_object_list")
    _wait(pg, pg._comm.Isend(data, peer, _OBJECT_TAG), "send_object_list")


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None,
                     use_batch=False):
    """Fill object_list with the objects rank `src` (any rank when None) sent; returns the
    sender's rank."""
    pg = _pg(group)
    MPI = _mpi.MPI
    if group_src is not None:
        peer = group_src
    else:
        peer = MPI.ANY_SOURCE if src is None else _group_rank(pg, src, "recv")
    if peer == pg.rank():
        raise ValueError("Invalid source rank: source rank should not be the same as the rank "
                         "of the current process.")
    sizes = np.empty(len(object_list), dtype=np.int64)
    status = MPI.Status()
    _mpi.wait(_StatusRequest(pg._comm.Irecv(sizes, peer, _OBJECT_TAG), status), pg._timeout,
              "recv_object_list")
    peer = status.Get_source()          # (the second message comes from the same sender)
    data = np.empty(int(sizes.sum()), dtype=np.uint8)
    _wait(pg, pg._comm.Irecv(data, peer, _OBJECT_TAG), "recv_object_list")
    offset = 0
    for i, size in enumerate(sizes.tolist()):
        object_list[i] = _objects.loads(data[offset:offset + size].tobytes())
        offset += size
    return pg._ranks[peer]


_OBJECT_TAG = 0x7E0B       # objects travel under their own tag, apart from tensors' tags


# ------------------------------------------------------------------ coalesced (deprecated)
_COALESCED = ("`torch.distributed.{}` will be deprecated. If you must use it, please revisit "
              "our documentation later at "
              "https://pytorch.org/docs/main/distributed.html#collective-functions")


class _Works:
    """Several Works as one (the coalesced collectives)."""

    def __init__(self, works, outputs):
        self._works, self._outputs = works, outputs

    def wait(self, timeout=None):
        for w in self._works:
            w.wait(timeout)
        return True

    def is_completed(self):
        return all(w.is_completed() for w in self._works)

    def get_future(self):
        return Future._of_work(self)


def all_reduce_coalesced(tensors, op=ReduceOp.SUM, group=None, async_op=False):
    """all_reduce of each tensor of a list."""
    warnings.warn(_COALESCED.format("all_reduce_coalesced"), FutureWarning, stacklevel=2)
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    if not _member(_pg(group)):
        return None
    works = [all_reduce(t, op, group, async_op=True) for t in tensors]
    return _run(_Works(works, list(tensors)), async_op)


def all_gather_coalesced(output_tensor_lists, input_tensor_list, group=None, async_op=False):
    """all_gather of each input tensor: output_tensor_lists[k] receives rank k's inputs."""
    warnings.warn(_COALESCED.format("all_gather_coalesced"), FutureWarning, stacklevel=2)
    pg = _pg(group)
    if not _member(pg):
        return None
    for k, outs in enumerate(output_tensor_lists):
        for i, (out, inp) in enumerate(zip(outs, input_tensor_list)):
            if out.numel() != inp.numel():
                raise RuntimeError(f"ProcessGroupGloo::allgather_coalesced: invalid size of "
                                   f"output tensor at index {i} (expected length "
                                   f"({inp.numel()}), got ({out.numel()}))")
    works = []
    for i, inp in enumerate(input_tensor_list):
        works.append(all_gather([outs[i] for outs in output_tensor_lists], inp, group, True))
    return _run(_Works(works, [t for outs in output_tensor_lists for t in outs]), async_op)


# ------------------------------------------------------------------ more groups
def get_pg_count():
    """How many process groups were made (the default one included; as in torch, a group
    counts on every rank, member or not)."""
    return _pg_count[0]


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None,
                  group_desc=None):
    """Split the group's ranks into consecutive groups of `group_size`; returns (this rank's
    group, every group, with NON_GROUP_MEMBER for those it is not in)."""
    if group_size is None:
        raise ValueError("Default group size only takes effect when CUDA is available.If your "
                         "subgroup using a backend that does not depend on CUDA,please pass in "
                         "'group_size' correctly.")
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    ranks = get_process_group_ranks(group) if group is not None else \
        list(range(get_world_size()))
    if group_size > len(ranks):
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size "
                         f"({len(ranks)})")
    if len(ranks) % group_size:
        raise ValueError("The world size must be divisible by 'group_size'")
    return new_subgroups_by_enumeration(
        [ranks[i:i + group_size] for i in range(0, len(ranks), group_size)], timeout, backend,
        pg_options, group_desc)


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None,
                                 pg_options=None, group_desc=None):
    """A group for each list of (global) ranks; returns (this rank's group, every group)."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    seen = {}
    for ranks in ranks_per_subgroup_list:
        for rank in ranks:
            if rank in seen:
                raise ValueError(f"Rank {rank} has appeared in both subgroup {seen[rank]} and "
                                 f"{ranks}")
            seen[rank] = ranks
    me = get_rank()
    mine, groups = None, []
    for ranks in ranks_per_subgroup_list:
        pg = new_group(ranks, timeout=timeout, backend=backend)
        groups.append(pg)
        if me in ranks:
            mine = pg
    return mine, groups


def split_group(parent_pg=None, split_ranks=None, timeout=None, pg_options=None,
                group_desc=None, backend=None):
    # torch splits only a group bound to a device (NCCL's ncclCommSplit); a CPU group cannot
    raise RuntimeError("No device associated with the default pg, not safe to split any "
                       "process groups")


def shrink_group(ranks_to_exclude, group=None, shrink_flags=0, pg_options=None):
    # (torch: only NCCL groups shrink)
    raise TypeError(f"Process group backend for '{_groups.index(_pg(group))}' does not support "
                    f"shrinking operations.")


def get_backend_config(group=None):
    return str(BackendConfig(get_backend(group)))


def is_backend_available(backend):
    """Whether init_process_group can run `backend` here: "gloo" and "mpi" (both on MPI) when
    mpi4py imports; "undefined" (the default name) too; none of the others (nccl, ucc, xccl,
    fake)."""
    name = backend.lower()
    if name in (Backend.GLOO, Backend.MPI, "cpu:gloo", Backend.UNDEFINED):
        return is_mpi_available() if name != Backend.UNDEFINED else True
    return False


def is_ucc_available():
    return False


def is_xccl_available():
    return False


def get_default_backend_for_device(device):
    kind = device.type if hasattr(device, "type") else str(device).split(":")[0]
    if kind != "cpu":
        raise ValueError(f"Default backend not registered for device : {kind}")
    return "gloo"


def get_node_local_rank(fallback_rank=None):
    """This process's rank on its machine (LOCAL_RANK, which ember.distributed.run sets)."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank "
                       "to allow `get_node_local_rank` to work, assuming you are not running in "
                       "a multi-device context and want the code to run locally instead.")


def supports_complex(reduceOp):
    """Whether the op reduces complex tensors (not MIN/MAX/PRODUCT/bitwise ones)."""
    return _op_name(reduceOp) not in ("MAX", "MIN", "PRODUCT", "BAND", "BOR", "BXOR")


def breakpoint(rank=0, skip=0, timeout_s=3600):
    """Stop rank `rank` in pdb; the other ranks wait at a barrier until it continues."""
    if skip > 0:
        count = _breakpoints.get(rank, 0) + 1
        _breakpoints[rank] = count
        if count <= skip:
            return
    if get_rank() == rank:
        pdb.Pdb().set_trace(sys._getframe(1))
    barrier()


_breakpoints = {}


@contextlib.contextmanager
def record_comm(name):
    """A profiling name for the collectives inside (ember's profiler does not trace them)."""
    yield


log = logging.getLogger("torch.distributed")


class _DeprecatedReduceOp:
    """The deprecated `reduce_op` namespace (ReduceOp's members, with a FutureWarning)."""

    def __getattribute__(self, name):
        warnings.warn("`torch.distributed.reduce_op` is deprecated, please use "
                      "`torch.distributed.ReduceOp` instead", FutureWarning, stacklevel=2)
        return getattr(ReduceOp, name)


reduce_op = _DeprecatedReduceOp()
