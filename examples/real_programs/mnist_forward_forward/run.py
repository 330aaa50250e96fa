"""pytorch/examples mnist_forward_forward/main.py (Hinton's forward-forward) on a stand-in MNIST."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402

os.environ.setdefault("STANDIN_DATASET_SIZE", "256")
run_program("main.py", ["--epochs", "20", "--train_size", "256", "--test_size", "128"])
