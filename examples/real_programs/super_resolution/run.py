"""pytorch/examples super_resolution/main.py (ESPCN: four convolutions and PixelShuffle,
orthogonal_ initialisation, MSELoss, Adam, whole-model `torch.save` checkpoints) on a stand-in
BSDS300: a few random PNG images written where its `download_bsd300` looks first, so nothing is
downloaded. Its `from six.moves import urllib` needs `six` on PYTHONPATH, and the images need
PIL; the stand-in torchvision gains CenterCrop and Resize for PIL images.

    python examples/real_programs/compare.py super_resolution /work/progs_src/examples/super_resolution
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402


def prepare(workdir, program_dir):
    from PIL import Image
    rng = np.random.RandomState(0)
    for split, count in (("train", 8), ("test", 4)):
        folder = os.path.join(workdir, "dataset", "BSDS300", "images", split)
        os.makedirs(folder, exist_ok=True)
        for i in range(count):
            # smooth random images (a coarse grid, upsampled), 260x270 so the 255 crop fits
            coarse = rng.randint(0, 256, size=(14, 14, 3)).astype(np.uint8)
            image = Image.fromarray(coarse).resize((270, 260), Image.BILINEAR)
            image.save(os.path.join(folder, f"{i}.png"))


run_program("main.py", ["--upscale_factor", "3", "--batchSize", "4", "--testBatchSize", "2",
                        "--nEpochs", "2", "--threads", "0"], prepare=prepare)
