"""karpathy/makemore makemore.py (character-level name models: bigram, mlp, rnn, gru, bow,
transformer) on its own names.txt, a few hundred steps, no data workers. It logs its losses with
`from torch.utils.tensorboard import SummaryWriter`, so it needs the tensorboard package.

    python examples/real_programs/compare.py makemore /work/progs_src/makemore --type gru
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402


def train_args(program_dir):
    # later flags on the command line (--type, --max-steps, ...) override these
    return ["--input-file", os.path.join(program_dir, "names.txt"), "--work-dir", "out",
            "--num-workers", "0", "--max-steps", "20"]


run_program("makemore.py", train_args)
