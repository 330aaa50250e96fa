"""pytorch/examples word_language_model/main.py (--model LSTM) on a synthetic wikitext-2 stand-in."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402
from _synthetic import write_text  # noqa: E402


def prepare(workdir, program_dir):
    for name, n, seed in (("train.txt", 300, 0), ("valid.txt", 40, 1), ("test.txt", 40, 2)):
        write_text(os.path.join(workdir, "data", "wikitext-2", name), n, seed)


run_program("main.py", ["--model", "LSTM", "--epochs", "1", "--emsize", "32", "--nhid", "32",
                        "--nlayers", "2", "--bptt", "16", "--batch_size", "8", "--log-interval", "5",
                        "--nhead", "2"],
            prepare=prepare)
