"""tkipf/pygcn pygcn/train.py (GCN with a scipy-built sparse adjacency) on a synthetic Cora.

Needs scipy (not in /work/venv: put a folder holding it on PYTHONPATH). load_data() reads
"../data/cora/" relative to the working folder, so the data goes next to the scratch folder."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402
from _synthetic import write_cora  # noqa: E402

run_program("pygcn/train.py", ["--epochs", "5", "--no-cuda"], extra_paths=["."],
            prepare=lambda workdir, program_dir: write_cora(os.path.join(workdir, "..", "data", "cora")))
