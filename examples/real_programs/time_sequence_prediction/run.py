"""pytorch/examples time_sequence_prediction (LSTMCell sine-wave predictor trained with LBFGS).

Its data comes from the example's own generate_sine_wave.py, run first in the same backend.
matplotlib is not installed here: a stand-in that draws nothing sits in this folder."""
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "standins"))
from _harness import run_program  # noqa: E402


def prepare(workdir, program_dir):
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        runpy.run_path(os.path.join(program_dir, "generate_sine_wave.py"))
    finally:
        os.chdir(cwd)


run_program("train.py", ["--steps", "2"], prepare=prepare)
