"""Run a module (`python tests/gpu/fake_launch.py ember.demo --device cuda ...`) with ember's
CUDA devices on the CPU stand-in for CuPy (tests/fake_cupy.py): run.sh --fake uses it."""
import os
import runpy
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import fake_cupy  # noqa: E402

if __name__ == "__main__":
    fake_cupy.install()
    module, sys.argv = sys.argv[1], sys.argv[1:]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
