"""pytorch/examples siamese_network/main.py (two ResNet-18 towers from `torchvision.models`,
BCELoss, Adadelta, StepLR; pairs drawn with Python's `random`, grouped with
`np.array(tensor, dtype=None, copy=None)`) on the stand-in MNIST, one dry-run batch and a small
test set. Needs the stand-in torchvision's `models.resnet18` and MNIST's `data`/`targets`.

    python examples/real_programs/compare.py siamese_network /work/progs_src/examples/siamese_network
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402

os.environ.setdefault("STANDIN_DATASET_SIZE", "64")
run_program("main.py", ["--batch-size", "16", "--test-batch-size", "32", "--epochs", "2",
                        "--log-interval", "1", "--no-accel"])
