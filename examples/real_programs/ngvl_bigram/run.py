"""karpathy/ng-video-lecture bigram.py (a bigram character model: Embedding, cross_entropy,
AdamW, `torch.randint` batches, `estimate_loss` under `torch.no_grad`, multinomial sampling) on a
synthetic input.txt. The program has no flags: its 3000 steps run as written (a few seconds)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402
from _synthetic import write_text  # noqa: E402


def prepare(workdir, program_dir):
    write_text(os.path.join(workdir, "input.txt"), 400, 0)


run_program("bigram.py", prepare=prepare)
