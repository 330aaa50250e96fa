"""What this machine's CPU can do, as PyTorch's CPU kernels ask it: some of their choices (the
oneDNN convolution for half types, and so the memory format of its result; the code paths of
MKL's sparse kernels, and so the rounding of their sums) follow the CPU's instruction sets or
its vendor, so ember asks the same questions to give the same answers."""
import functools
import os


@functools.lru_cache(maxsize=None)
def _cpuinfo(*keys):
    """The value of the first line of /proc/cpuinfo that starts with one of `keys` (empty where
    /proc/cpuinfo is absent or has no such line)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(keys):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


@functools.lru_cache(maxsize=None)
def _flags():
    """The CPU's feature flags as the kernel lists them (empty where /proc/cpuinfo is absent)."""
    return frozenset(_cpuinfo("flags", "Features").split())


def mkl_fuses():
    """Whether torch's MKL kernels (the sparse CSR/CSC/BSR products) take their Intel code
    paths here, which sum with fused multiply-adds. MKL dispatches its optimised paths on the
    CPU's vendor, not only on its instruction sets: on an AMD CPU (AVX-512 and FMA or not) it
    takes other paths, which round each product before adding it and group the sums their own
    way (ember/sparse/_compressed.py). True on an Intel CPU ("GenuineIntel"), else False."""
    return _cpuinfo("vendor_id") == "GenuineIntel"


def onednn_takes(dtype_name):
    """Whether PyTorch's oneDNN kernels run `dtype_name` ("bfloat16", "float16") on this CPU:
    bfloat16 needs AVX-512 (its BW, VL and DQ parts), float16 AVX-512-FP16 or AMX-FP16."""
    flags = _flags()
    if dtype_name == "bfloat16":
        return {"avx512bw", "avx512vl", "avx512dq"} <= flags
    if dtype_name == "float16":
        return "avx512_fp16" in flags or "amx_fp16" in flags
    return False


def aten_vector_bytes():
    """The width of torch's CPU vectors here, as torch chooses its kernels: AVX-512 (64 bytes)
    where the CPU has avx512f/bw/vl/dq, else AVX2 (32), unless ATEN_CPU_CAPABILITY asks for
    less; 0 for "default" (no vector kernels: every element takes the scalar function).
    (Only the AVX-512 case could be checked against torch on the machines we have.)"""
    asked = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
    if asked == "default":
        return 0
    avx512 = {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= _flags()
    return 64 if avx512 and asked not in ("avx2",) else 32
