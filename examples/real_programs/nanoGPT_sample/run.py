"""karpathy/nanoGPT sample.py (generation from a checkpoint: torch.load, top-k, multinomial).

The checkpoint comes from the nanoGPT runner's own small training run (train.py, same backend,
same stand-in data), done first in the scratch folder."""
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "nanoGPT"))
sys.path.insert(0, os.path.join(HERE, "standins"))
from _harness import run_program  # noqa: E402
import prepare_data  # noqa: E402


def prepare(workdir, program_dir):
    prepare_data.prepare(workdir, program_dir)
    cwd, argv = os.getcwd(), sys.argv
    os.chdir(workdir)
    sys.argv = [os.path.join(program_dir, "train.py"), *prepare_data.train_args(program_dir)]
    try:
        runpy.run_path(sys.argv[0], run_name="__main__")
    finally:
        os.chdir(cwd)
        sys.argv = argv


run_program("sample.py", ["--out_dir=out", "--device=cpu", "--compile=False", "--dtype=float32",
                          "--num_samples=2", "--max_new_tokens=40", "--start=the "],
            prepare=prepare)
