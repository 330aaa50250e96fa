"""spro/char-rnn.pytorch train.py (GRU character model) on a synthetic text file.

Needs tqdm and unidecode (not in /work/venv: put a folder holding them on PYTHONPATH)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402
from _synthetic import write_text  # noqa: E402

run_program("train.py", ["text.txt", "--n_epochs", "3", "--chunk_len", "20", "--batch_size", "4",
                         "--hidden_size", "16", "--print_every", "1"],
            prepare=lambda workdir, program_dir: write_text(os.path.join(workdir, "text.txt"), 100, 0))
