"""pytorch/examples gcn/main.py (graph network on Cora) with a synthetic Cora served by a stand-in
`requests` (the program always downloads cora.tgz)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402
from _synthetic import cora_tgz, install_fake_requests  # noqa: E402

install_fake_requests(cora_tgz())
run_program("main.py", ["--epochs", "5", "--val-every", "1", "--no-accel"])
