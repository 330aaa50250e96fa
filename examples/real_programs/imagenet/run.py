"""pytorch/examples imagenet/main.py with `--dummy` (torchvision's FakeData: here the stand-in's,
8 images per split) and `-a resnet18` (the stand-in torchvision's): SGD with momentum and weight
decay, StepLR, AverageMeter/ProgressMeter, top-1/top-5 accuracy, `Subset`, checkpoints of the
model, optimizer and scheduler state with `shutil.copyfile` of the best, 224x224 inputs.

    python examples/real_programs/compare.py imagenet /work/progs_src/examples/imagenet
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402

os.environ.setdefault("STANDIN_DATASET_SIZE", "8")
run_program("main.py", ["--dummy", "-a", "resnet18", "--epochs", "2", "-b", "4", "-j", "0",
                        "-p", "1", "--no-accel", "--seed", "0"])
