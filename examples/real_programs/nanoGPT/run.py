"""karpathy/nanoGPT train.py with config/train_shakespeare_char.py, shrunk by its own
--key=value overrides, on a synthetic shakespeare_char (train.bin/val.bin/meta.pkl)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import run_program  # noqa: E402
from prepare_data import prepare, train_args  # noqa: E402

run_program("train.py", train_args, prepare=prepare)
