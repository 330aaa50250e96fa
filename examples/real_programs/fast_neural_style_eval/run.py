"""pytorch/examples fast_neural_style `neural_style.py eval` (stylize: `torch.load` of a
state_dict checkpoint, its InstanceNorm `running_*` keys dropped by name, `load_state_dict`,
`no_grad` inference, the image written with PIL) on a random content PNG, with the model that
the fast_neural_style runner trains first into the same scratch folder under the same backend.

    python examples/real_programs/fast_neural_style_eval/run.py --backend ember --workdir W DIR
    (the stylized image: W/stylized.png)
"""
import glob
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from _harness import run_program  # noqa: E402


def prepare(workdir, program_dir):
    from PIL import Image
    backend = sys.argv[sys.argv.index("--backend") + 1]
    subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "fast_neural_style", "run.py"),
                    "--backend", backend, "--workdir", workdir, program_dir], check=True,
                   stdout=subprocess.DEVNULL)
    rng = np.random.RandomState(1)
    coarse = rng.randint(0, 256, size=(6, 6, 3)).astype(np.uint8)
    Image.fromarray(coarse).resize((40, 28), Image.BILINEAR).save(os.path.join(workdir, "content.png"))


def eval_args(program_dir):
    (model,) = glob.glob("out/*.model")   # run in the scratch folder: the trained model
    return ["eval", "--content-image", "content.png", "--model", model,
            "--output-image", "stylized.png"]


run_program("neural_style/neural_style.py", eval_args, prepare=prepare)
