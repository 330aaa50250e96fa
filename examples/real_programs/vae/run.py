"""pytorch/examples vae/main.py (variational autoencoder) on a synthetic stand-in MNIST."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402

os.environ.setdefault("STANDIN_DATASET_SIZE", "256")
run_program("main.py", ["--epochs", "1", "--batch-size", "32", "--log-interval", "1", "--no-accel"],
            prepare=lambda workdir, program_dir: os.makedirs(os.path.join(workdir, "results"), exist_ok=True))
