"""pytorch/examples dcgan/main.py (DCGAN) on torchvision-style FakeData (synthetic images)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402

os.environ.setdefault("STANDIN_DATASET_SIZE", "32")
run_program("main.py", ["--dataset", "fake", "--batchSize", "8", "--imageSize", "64", "--nz", "16",
                        "--ngf", "8", "--ndf", "8", "--niter", "1", "--workers", "0",
                        "--manualSeed", "1", "--outf", "out"],
            prepare=lambda workdir, program_dir: os.makedirs(os.path.join(workdir, "out"), exist_ok=True))
