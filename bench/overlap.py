"""Does a product on a second thread overlap with elementwise work? `python bench/overlap.py`

NumPy's elementwise passes run on one thread, and sharing one kernel's short calls over two
Python threads costs a GIL handoff per call (more than the second core gives on the 2-core
development machine: ember/_parallel.py). A matrix product is one long call: on a pool thread
it needs the GIL only to start and to finish, so it could run while the calling thread works
through a kernel's passes. This measures that: two float32 GELU forwards over (1024, 512) (the
GPT MLP's, ~17 short passes each) and one (512 x 1024) @ (1024 x 128) product (a weight
gradient's shape), one after the other and with the product on a pool thread, BLAS on one
thread for both. Medians of repeated runs.
"""
import os
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

if __name__ == "__main__":
    common.native_blas()
    common.set_threads_env(1)

import numpy as np  # noqa: E402

from ember import _fast_kernels  # noqa: E402
from common import fmt, median_time  # noqa: E402


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1024, 512)).astype(np.float32)
    a = rng.standard_normal((512, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 128)).astype(np.float32)
    pool = ThreadPoolExecutor(1)

    def elementwise():
        _fast_kernels.gelu_f32(x)
        _fast_kernels.gelu_f32(x)

    def product():
        np.matmul(a, b)

    def in_turn():
        elementwise()
        product()

    def overlapped():
        pending = pool.submit(product)
        elementwise()
        pending.result()

    print(common.blas_description())
    for name, fn in [("elementwise (2 GELU forwards)", elementwise),
                     ("product (512x1024 @ 1024x128)", product),
                     ("one after the other", in_turn),
                     ("product on a pool thread", overlapped)]:
        print(f"{name:<34}{fmt(median_time(fn, repeat=9)):>12}")


if __name__ == "__main__":
    main()
