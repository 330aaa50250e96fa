"""pytorch/examples word_language_model/generate.py: reloads a whole pickled Transformer model
under torch.serialization.safe_globals and samples words from it.

The checkpoint comes from a short main.py --model Transformer run (same backend, same stand-in
text), done first in the scratch folder."""
import os
import runpy
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402
from _synthetic import write_text  # noqa: E402


def prepare(workdir, program_dir):
    for name, n, seed in (("train.txt", 200, 0), ("valid.txt", 20, 1), ("test.txt", 20, 2)):
        write_text(os.path.join(workdir, "data", "wikitext-2", name), n, seed)
    cwd, argv = os.getcwd(), sys.argv
    os.chdir(workdir)
    sys.argv = [os.path.join(program_dir, "main.py"), "--model", "Transformer", "--epochs", "1",
                "--emsize", "32", "--nhid", "32", "--nlayers", "2", "--bptt", "16",
                "--batch_size", "8", "--nhead", "2", "--save", "model.pt"]
    try:
        runpy.run_path(sys.argv[0], run_name="__main__")
    finally:
        os.chdir(cwd)
        sys.argv = argv


run_program("generate.py", ["--checkpoint", "model.pt", "--words", "30", "--log-interval", "10"],
            prepare=prepare)
