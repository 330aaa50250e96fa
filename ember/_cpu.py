"""What this machine's CPU can do, as PyTorch's CPU kernels ask it: some of their choices (the
oneDNN convolution for half types, and so the memory format of its result) follow the CPU's
instruction sets, so ember asks the same questions to give the same answers."""
import functools


@functools.lru_cache(maxsize=None)
def _flags():
    """The CPU's feature flags as the kernel lists them (empty where /proc/cpuinfo is absent)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def onednn_takes(dtype_name):
    """Whether PyTorch's oneDNN kernels run `dtype_name` ("bfloat16", "float16") on this CPU:
    bfloat16 needs AVX-512 (its BW, VL and DQ parts), float16 AVX-512-FP16 or AMX-FP16."""
    flags = _flags()
    if dtype_name == "bfloat16":
        return {"avx512bw", "avx512vl", "avx512dq"} <= flags
    if dtype_name == "float16":
        return "avx512_fp16" in flags or "amx_fp16" in flags
    return False
