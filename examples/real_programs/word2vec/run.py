"""toooooodo/pytorch-word2vec main.py (skip-gram with negative sampling) on synthetic PTB-like
text. The program hard-codes torch.device('cuda') and there is no GPU here: this runner alone
makes torch.device('cuda') mean the CPU, in both the torch and the ember run."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import _harness  # noqa: E402
from _synthetic import write_text  # noqa: E402


def prepare(workdir, program_dir):
    path = os.path.join(workdir, "data", "ptb.train.txt")
    write_text(path, 300, 0)
    with open(path, "a") as f:  # the program ends by asking for the neighbours of "chip"
        f.write("the chip of the new chip\n" * 3)
    torch = sys.modules["torch"]
    real_device = torch.device

    class CudaMeansCpu(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, real_device)

        def __call__(cls, spec, *args):
            if str(spec).startswith("cuda"):
                return real_device("cpu")
            return real_device(spec, *args)

    class device(metaclass=CudaMeansCpu):  # still a type, for annotations like `str | torch.device`
        pass

    torch.device = device


_harness.run_program("main.py", prepare=prepare)
