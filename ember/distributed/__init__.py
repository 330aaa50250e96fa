"""ember.distributed: ember runs in one process, so there is never a process group.

torch answers `is_available()` True on this machine (its CPU build has the gloo backend), and
ember gives the same answers a program sees before any group is made: no group initialised,
and torch's ValueError from the calls that need the default group (rank, world size,
collectives). `init_process_group` itself raises a RuntimeError saying ember cannot make one.
"""
_NO_GROUP = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")


def is_available():
    return True


def is_initialized():
    return False


def is_nccl_available():
    return False


def is_gloo_available():
    return True


def is_mpi_available():
    return False


def is_torchelastic_launched():
    return False


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    raise RuntimeError("ember.distributed: ember runs in a single process and cannot make a "
                       "process group; run the program without init_process_group (a "
                       "DistributedSampler can be given num_replicas and rank explicitly)")


def _needs_group(*args, **kwargs):
    raise ValueError(_NO_GROUP)


get_rank = get_world_size = get_backend = barrier = all_reduce = reduce = broadcast = \
    all_gather = all_gather_object = gather = scatter = reduce_scatter = all_to_all = \
    broadcast_object_list = send = recv = isend = irecv = new_group = monitored_barrier = \
    _needs_group


def destroy_process_group(group=None):
    raise AssertionError("Process group cannot be None")


class ReduceOp:
    """The reduction names of the collectives (which ember cannot run)."""
    SUM, PRODUCT, MIN, MAX, BAND, BOR, BXOR, AVG, PREMUL_SUM = (
        "SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "AVG", "PREMUL_SUM")


class Backend(str):
    """A backend's name (`Backend("GLOO") == "gloo"`)."""
    GLOO, NCCL, MPI, UCC, XCCL, UNDEFINED = "gloo", "nccl", "mpi", "ucc", "xccl", "undefined"

    def __new__(cls, name):
        return str.__new__(cls, name.lower())


class GroupMember:
    WORLD = None        # no default group
    NON_GROUP_MEMBER = -100


group = GroupMember
