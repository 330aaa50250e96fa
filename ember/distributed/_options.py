"""Option records of torch's process-group API (AllreduceOptions, ...), BackendConfig and the
debug level. The collectives take keyword arguments; these classes exist for programs that
build the records (and read their fields) themselves."""
import datetime
import enum
import os
import warnings

_UNSET = datetime.timedelta(milliseconds=-1)     # torch's "use the group's timeout"


class PybindEnumNames:
    """repr and str of an enum as torch's C++-bound enums print: `<RedOpType.SUM: 0>` and
    `RedOpType.SUM`, under the last part of the class's qualified name (mixed in before
    enum.Enum / enum.IntEnum)."""

    def __repr__(self):
        return f"<{type(self).__qualname__.rpartition('.')[2]}.{self.name}: {self.value}>"

    def __str__(self):
        return f"{type(self).__qualname__.rpartition('.')[2]}.{self.name}"


class ReduceOp:
    """torch's ReduceOp: `ReduceOp.SUM` etc. are members of the RedOpType enum."""

    class RedOpType(PybindEnumNames, enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

    SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR, PREMUL_SUM = RedOpType

    def __init__(self, op=RedOpType.SUM):
        self.op = ReduceOp.RedOpType(int(op))
        self._factor = None         # PREMUL_SUM's factor (_make_nccl_premul_sum)

    def __eq__(self, other):
        other = other.op if isinstance(other, ReduceOp) else other
        return self.op == other and self._factor is None

    def __hash__(self):
        return hash(self.op)


class _Options:
    def __init__(self):
        self.timeout = _UNSET
        self.asyncOp = True


class _ReduceOptions(_Options):
    def __init__(self):
        super().__init__()
        self.reduceOp = ReduceOp()


class AllreduceOptions(_ReduceOptions):
    pass


class AllreduceCoalescedOptions(AllreduceOptions):
    pass


class ReduceScatterOptions(_ReduceOptions):
    pass


class ReduceOptions(_ReduceOptions):
    def __init__(self):
        super().__init__()
        self.rootRank = 0
        self.rootTensor = 0


class BroadcastOptions(_Options):
    def __init__(self):
        super().__init__()
        self.rootRank = 0
        self.rootTensor = 0


class GatherOptions(_Options):
    def __init__(self):
        super().__init__()
        self.rootRank = 0


class ScatterOptions(GatherOptions):
    pass


class AllToAllOptions(_Options):
    pass


class BarrierOptions(_Options):
    def __init__(self):
        super().__init__()
        self.device_ids = []
        self.device = None


class BackendConfig:
    """Which backend each device type uses: "cpu:gloo,cuda:gloo" for gloo."""

    _DEVICES = {"gloo": ("cpu", "cuda"), "mpi": ("cpu", "cuda"), "nccl": ("cuda",),
                "ucc": ("cpu", "cuda"), "xccl": ("xpu",)}

    def __init__(self, backend):
        name = str(backend).lower()
        if ":" in name:
            self._map = dict(part.split(":") for part in name.split(","))
        else:
            devices = self._DEVICES.get(name)
            if devices is None:
                warnings.warn(f"Device capability of {name} unknown, assuming `cpu` and "
                              f"`cuda`. You can specify it in `device:backend` format in "
                              f"`init_process_group` call.", stacklevel=2)
                devices = ("cpu", "cuda", "xpu")
            self._map = {d: name for d in devices}

    def get_device_backend_map(self):
        return dict(self._map)

    def __repr__(self):
        return ",".join(f"{d}:{b}" for d, b in self._map.items())


class DebugLevel(PybindEnumNames, enum.Enum):
    """TORCH_DISTRIBUTED_DEBUG's levels (ember records the level; it logs nothing extra)."""
    OFF = 0
    INFO = 1
    DETAIL = 2


_debug_level = [DebugLevel.OFF]


def get_debug_level():
    return _debug_level[0]


def set_debug_level(level):
    if not isinstance(level, DebugLevel):
        raise TypeError(f"set_debug_level(): incompatible function arguments. The following "
                        f"argument types are supported:\n    1. (arg0: DebugLevel) -> None\n\n"
                        f"Invoked with: {level!r}")
    _debug_level[0] = level


def set_debug_level_from_env():
    value = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").upper()
    if value not in DebugLevel.__members__:
        raise ValueError("The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL.")
    _debug_level[0] = DebugLevel[value]


class BuiltinCommHookType(PybindEnumNames, enum.Enum):
    """The hooks DDP._register_builtin_comm_hook takes (run as default_hooks' Python ones)."""
    ALLREDUCE = 1
    FP16_COMPRESS = 2
