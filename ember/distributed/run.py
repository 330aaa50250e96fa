"""A torchrun-like launcher: `python -m ember.distributed.run --nproc-per-node N train.py ARGS`.

It starts the job with MPI's own launcher (`mpiexec`, from the mpich wheel installed next to
this Python), and each process sets the variables torchrun sets (RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT) from its MPI rank before running the
script as __main__. Across machines, give `--hostfile FILE` (MPICH's host file: one
`host[:slots]` a line) and `--nnodes`; the total is nnodes * nproc-per-node.
"""
import argparse
import os
import runpy
import shutil
import socket
import sys
from . import _mpi
from ._mpi import _INSTALL


def _mpiexec():
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = here if os.path.exists(here) else shutil.which("mpiexec")
    if found is None:
        raise SystemExit(_INSTALL)
    return found


def _parse(argv):
    p = argparse.ArgumentParser(
        prog="python -m ember.distributed.run",
        description="Start N processes of a torch.distributed program under MPI.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1)
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--node-rank", "--node_rank", type=int, default=0,
                   help="accepted for torchrun compatibility (MPI places ranks itself)")
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--hostfile", default=None,
                   help="MPICH host file (one host[:slots] a line) for a multi-machine job")
    p.add_argument("--standalone", action="store_true", help="accepted for torchrun "
                   "compatibility")
    p.add_argument("--no-bind", action="store_true",
                   help="on one machine, do not bind each process to its own core (bound by "
                   "default when there are as many processes as usable CPUs)")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the target as a module (python -m)")
    p.add_argument("script")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    return p.parse_args(argv)


def main(argv=None):
    args = _parse(sys.argv[1:] if argv is None else argv)
    n = args.nproc_per_node * args.nnodes
    command = [_mpiexec(), "-n", str(n)]
    if args.hostfile:
        command += ["-f", args.hostfile]
    else:
        command += ["-ppn", str(args.nproc_per_node)]
        if not args.no_bind and args.nproc_per_node == _usable_cpus():
            # With a process per CPU, MPI's waits poll, and two ranks the kernel puts on one
            # core take turns there while the other core runs something else: an all-reduce
            # then waits a time slice at each step. One core each keeps them apart
            # (bench/bench_distributed.py: 64 KB-4 MB under load).
            command += ["-bind-to", "core"]
    env = dict(os.environ,
               MASTER_ADDR=args.master_addr if not args.hostfile else _first_host(args),
               MASTER_PORT=str(args.master_port),
               LOCAL_WORLD_SIZE=str(args.nproc_per_node), WORLD_SIZE=str(n))
    target = ["-m", args.script] if args.module else [args.script]
    command += [sys.executable, "-m", "ember.distributed.run", "--_child"] + target + \
        args.script_args
    os.execve(command[0], command, env)


def _usable_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:      # (not on Linux)
        return os.cpu_count() or 1


def _first_host(args):
    with open(args.hostfile) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                return line.split(":")[0]
    return socket.gethostname()


def _child(argv):
    """In each process: torchrun's variables from MPI's rank, then the script."""
    MPI = _mpi.load()
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    local = world.Split_type(MPI.COMM_TYPE_SHARED, key=rank)
    local_rank, local_size = local.Get_rank(), local.Get_size()
    local.Free()
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(size), LOCAL_RANK=str(local_rank),
                      LOCAL_WORLD_SIZE=str(local_size), GROUP_RANK=str(rank // local_size),
                      ROLE_RANK=str(rank), ROLE_WORLD_SIZE=str(size))
    _mpi.install_excepthook()       # an error in the script stops every rank
    if argv[0] == "-m":
        sys.argv = [argv[1]] + argv[2:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--_child":
        _child(sys.argv[2:])
    else:
        main()
