"""The MPI side of ember.distributed: loading mpi4py, ember dtypes as MPI datatypes, reduction
ops, and waits that give up after the group's timeout instead of hanging.

mpi4py is an optional dependency (the `distributed` extra), so it is imported only when a
process group is made; without it `import ember` works as before.
"""
import os
import sys
import time
import traceback

import numpy as np

from .. import _dtype as D

_INSTALL = ("ember.distributed needs MPI: install the extra with `pip install "
            "'ember[distributed]'` (that is `pip install mpi4py mpich`), then start the "
            "program with `mpiexec -n N python prog.py` or "
            "`python -m ember.distributed.run --nproc-per-node N prog.py`")

MPI = None


def load():
    """mpi4py's MPI module, initialised (MPI_Init_thread) on first use."""
    global MPI
    if MPI is None:
        mpi4py = importable()
        if mpi4py is None:
            raise RuntimeError(_INSTALL)
        # we abort the job ourselves on an uncaught error (see install_excepthook), and
        # finalize explicitly in destroy_process_group
        mpi4py.rc.finalize = True
        try:
            from mpi4py import MPI as mpi  # (optional dependency: mpi4py)
        except ImportError as e:        # mpi4py without an MPI library underneath
            raise RuntimeError(f"{_INSTALL} ({e})") from e
        MPI = mpi
    return MPI


def importable():
    """The mpi4py package, or None when it does not import (the extra is not installed)."""
    try:
        import mpi4py  # (optional dependency: mpi4py)
    except ImportError:
        return None
    return mpi4py


# ------------------------------------------------------------------ datatypes
_NATIVE = {}        # ember dtype -> MPI datatype MPI reduces itself
_BYTES = {}         # itemsize -> an MPI datatype of that many raw bytes (one element)


def datatype(dtype):
    """The MPI datatype for one element of `dtype`, and whether MPI's own ops apply to it.
    float16, bfloat16 and bool travel as raw bytes of their width (so a reduction never splits
    an element) and are reduced by ember's own ops (see `mpi_op`)."""
    if not _NATIVE:
        _NATIVE.update({
            D.uint8: MPI.UINT8_T, D.int8: MPI.INT8_T, D.int16: MPI.INT16_T,
            D.int32: MPI.INT32_T, D.int64: MPI.INT64_T, D.float32: MPI.FLOAT,
            D.float64: MPI.DOUBLE, D.complex64: MPI.C_FLOAT_COMPLEX,
            D.complex128: MPI.C_DOUBLE_COMPLEX})
    native = _NATIVE.get(dtype)
    if native is not None:
        return native, True
    size = dtype.itemsize
    t = _BYTES.get(size)
    if t is None:
        t = _BYTES[size] = MPI.BYTE.Create_contiguous(size).Commit()
    return t, False


# ------------------------------------------------------------------ reductions
# ReduceOp name -> how two arrays combine (bool follows torch's gloo: SUM/MAX are "or",
# PRODUCT/MIN are "and")
def _combine(name, dtype):
    if dtype is D.bool_:
        return {"SUM": np.logical_or, "MAX": np.logical_or, "BOR": np.logical_or,
                "PRODUCT": np.logical_and, "MIN": np.logical_and, "BAND": np.logical_and,
                "BXOR": np.logical_xor}[name]
    return {"SUM": np.add, "AVG": np.add, "PRODUCT": np.multiply, "MIN": np.minimum,
            "MAX": np.maximum, "BAND": np.bitwise_and, "BOR": np.bitwise_or,
            "BXOR": np.bitwise_xor}[name]


_USER_OPS = {}      # (op name, dtype) -> MPI.Op made from _combine


def check_op(name, dtype):
    """torch's errors for a reduction the dtype does not support."""
    if name in ("BAND", "BOR", "BXOR") and dtype._category >= 2:
        raise RuntimeError(f"Cannot use ReduceOp.{name} with non-integral dtype")
    if name == "AVG" and dtype._category < 2:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_scalar_name(dtype)}")
    if name in ("MIN", "MAX") and dtype.is_complex:
        raise RuntimeError(f"Cannot use ReduceOp.{name} with complex inputs")
    if name == "PREMUL_SUM":
        raise RuntimeError("Cannot use ReduceOp.PREMUL_SUM with Gloo")


def _scalar_name(dtype):
    return {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
            "int64": "Long"}.get(dtype.name, dtype.name)


def mpi_op(name, dtype):
    """The MPI.Op reducing `dtype` by ReduceOp `name` (AVG reduces as SUM: the caller divides)."""
    _, native = datatype(dtype)
    if native and dtype is not D.bool_:
        return {"SUM": MPI.SUM, "AVG": MPI.SUM, "PRODUCT": MPI.PROD, "MIN": MPI.MIN,
                "MAX": MPI.MAX, "BAND": MPI.BAND, "BOR": MPI.BOR, "BXOR": MPI.BXOR}[name]
    key = (name, dtype)
    op = _USER_OPS.get(key)
    if op is None:
        combine, npdtype = _combine(name, dtype), dtype.np

        def reduce_bytes(inbuf, inoutbuf, _datatype):
            a = np.frombuffer(inbuf, dtype=npdtype)
            b = np.frombuffer(inoutbuf, dtype=npdtype)
            if dtype._half:     # torch reduces half precision through float32
                b[...] = combine(a.astype(np.float32), b.astype(np.float32)).astype(npdtype)
            else:
                combine(a, b, out=b)
        op = _USER_OPS[key] = MPI.Op.Create(reduce_bytes, commute=True)
    return op


def reduce_local(name, dtype, arrays):
    """The reduction of a list of arrays in this process (for gathers done locally)."""
    combine = _combine(name, dtype)
    acc = arrays[0].astype(np.float32) if dtype._half else arrays[0].copy()
    for a in arrays[1:]:
        acc = combine(acc, a.astype(np.float32) if dtype._half else a)
    return acc.astype(dtype.np)


# ------------------------------------------------------------------ waiting
def wait(request, timeout, what, spin=None):
    """Wait for an MPI request, but no longer than `timeout` seconds (a timedelta): past it,
    every rank of the job is stopped with an error naming the operation, as torch's watchdog
    would, rather than hanging forever on a rank that died or never came."""
    if request.Test():
        return
    # MPI progresses a non-blocking operation only inside calls like Test, so keep calling it.
    # For the first `spin` seconds (spin_for) flat out (a small message is done in microseconds while
    # both ranks are on a core); after that the CPU goes to any other runnable process between
    # calls (sched_yield): with more busy processes than cores, a rank spinning flat out takes
    # the time slices its peer needs to make the very progress it waits for. On an idle
    # machine sched_yield returns at once.
    start = time.monotonic()
    deadline = start + timeout.total_seconds()
    spin = _spin[0] if spin is None else spin
    spins = 0
    yielding = False
    while not request.Test():
        spins += 1
        if yielding:
            _yield()
        if spins % 64 == 0:
            now = time.monotonic()
            if now > deadline:
                abort(f"ember.distributed: {what} did not complete within the process "
                      f"group's timeout of {timeout} (another rank may have failed or never "
                      f"called it)")
            yielding = now - start > spin
            if now - start > 0.5:       # a long wait (a slow peer): poll 1000 times a second
                time.sleep(0.001)


# How long a wait polls before it yields: 200 us, or 1 ms when each rank of this machine has a
# core of its own (ember.distributed.run binds them so) and the operation moves at most 4 MB
# (spin_for): a longer spin then takes no time from a peer, and a yield under load costs a
# time slice of whatever else runs on the core. Under load (load average 8 on 2 cores), 4 MB
# all-reduces took a median 2.8 ms with 200 us and 1.1 ms with 1 ms; 16 MB ones, whose copies
# alone outlast the spin, got slower with it (17 -> 20 ms, 23 ms with 2 ms): spinning spends
# the share of the core that the copies then lack.
_SPIN_SHARED, _SPIN_OWN_CORE = 0.0002, 0.001
_LONG_SPIN_MAX_BYTES = 4 << 20
_spin = [_SPIN_SHARED]


def spin_for(nbytes):
    """The spin of a wait for an operation that moves `nbytes` bytes."""
    return _spin[0] if nbytes <= _LONG_SPIN_MAX_BYTES else _SPIN_SHARED


def set_spin_for(comm):
    """Choose the spin from where this machine's ranks of `comm` run (collective on comm)."""
    try:
        cpus = os.sched_getaffinity(0)
    except AttributeError:      # (not on Linux)
        cpus = set()
    local = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
    cores = local.allgather(min(cpus) if len(cpus) == 1 else -1)
    local.Free()
    own = -1 not in cores and len(set(cores)) == len(cores)
    _spin[0] = _SPIN_OWN_CORE if own else _SPIN_SHARED
_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


def abort(message, code=1, linger=0.0):
    """Print `message` and stop every process of the job (MPI_Abort). `linger` seconds pass
    between the print and the abort: mpiexec forwards a rank's output asynchronously and the
    abort tears the forwarding down, which can cut off the last lines the user needs."""
    rank = MPI.COMM_WORLD.Get_rank() if MPI is not None and MPI.Is_initialized() else "?"
    sys.stderr.write(f"[rank {rank}] {message}\n")
    sys.stderr.flush()
    if linger:
        time.sleep(linger)
    if MPI is not None and MPI.Is_initialized() and not MPI.Is_finalized():
        MPI.COMM_WORLD.Abort(code)
    os._exit(code)


_installed = [False]


def install_excepthook():
    """An uncaught exception on any rank prints its traceback, then aborts the whole job, so
    the other ranks stop at once instead of waiting in their next collective."""
    if _installed[0]:
        return
    _installed[0] = True
    previous = sys.excepthook

    def hook(kind, value, tb):
        if previous is sys.__excepthook__:
            # one write, so mpiexec's output forwarding gets the traceback whole
            sys.stderr.write("".join(traceback.format_exception(kind, value, tb)))
        else:
            previous(kind, value, tb)
        if kind is not KeyboardInterrupt and kind is not SystemExit:
            abort(f"ember.distributed: uncaught {kind.__name__}: {value}; aborting the job",
                  linger=0.5)

    sys.excepthook = hook
