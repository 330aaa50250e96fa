"""pytorch/examples mnist_hogwild/main.py: Hogwild! training, two processes (spawn) updating one
model in shared memory (`model.share_memory()`), on a synthetic stand-in MNIST."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402

os.environ.setdefault("STANDIN_DATASET_SIZE", "256")
run_program("main.py", ["--epochs", "1", "--batch-size", "32", "--test-batch-size", "64",
                        "--log-interval", "2", "--num-processes", "2"])
