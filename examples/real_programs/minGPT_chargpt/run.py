"""karpathy/minGPT projects/chargpt/chargpt.py (character-level GPT) on synthetic text, gpt-nano."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402
from _synthetic import write_text  # noqa: E402



def prepare(workdir, program_dir):
    path = os.path.join(workdir, "input.txt")
    write_text(path, 200, 0)
    with open(path, "a") as f:  # the program samples from the prompt "O God, O God!"
        f.write("O God, O God!\n")


run_program("projects/chargpt/chargpt.py",
            ["--model.model_type=gpt-nano", "--data.block_size=32", "--trainer.max_iters=21",
             "--trainer.batch_size=8", "--trainer.num_workers=0", "--trainer.device=cpu",
             "--system.work_dir=out"],
            extra_paths=["."],
            prepare=prepare)
