"""pytorch/examples regression/main.py (polynomial fit with a Linear layer; makes its own data)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402

run_program("main.py")
