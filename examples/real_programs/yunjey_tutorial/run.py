"""yunjey/pytorch-tutorial: any of its single-file tutorials (`<tutorial folder>/main.py`) on the
stand-in MNIST. The tutorials take no flags: their epochs are fixed in the code, so the stand-in
data set is kept small (STANDIN_DATASET_SIZE, default 200: two batches of 100 per epoch)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402

os.environ.setdefault("STANDIN_DATASET_SIZE", "200")
run_program("main.py", [])
