"""pytorch/examples fast_neural_style/neural_style/neural_style.py `train` (a TransformerNet with
ReflectionPad2d, InstanceNorm2d(affine) and nearest `interpolate` upsampling, trained against a
frozen VGG-16's features: MSE of features and of Gram matrices via `bmm`, Adam, checkpoints of
state_dicts) on a stand-in image folder and style image (random PNGs), 32x32 images.

The stand-in torchvision supplies `datasets.ImageFolder`, `models.vgg16` and `VGG16_Weights`
(no pretrained weights: VGG keeps its own initialisation, synced between the runs by --sync).

    python examples/real_programs/compare.py fast_neural_style /work/progs_src/examples/fast_neural_style
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402


def _write_image(path, rng, size):
    from PIL import Image
    coarse = rng.randint(0, 256, size=(8, 8, 3)).astype(np.uint8)
    Image.fromarray(coarse).resize(size, Image.BILINEAR).save(path)


def prepare(workdir, program_dir):
    rng = np.random.RandomState(0)
    folder = os.path.join(workdir, "dataset", "images")
    os.makedirs(folder, exist_ok=True)
    for i in range(6):
        _write_image(os.path.join(folder, f"{i}.png"), rng, (40, 36))
    _write_image(os.path.join(workdir, "style.png"), rng, (48, 48))


run_program("neural_style/neural_style.py",
            ["train", "--dataset", "dataset", "--style-image", "style.png", "--save-model-dir",
             "out", "--checkpoint-model-dir", "ckpt", "--checkpoint-interval", "2",
             "--epochs", "2", "--batch-size", "2", "--image-size", "32", "--log-interval", "1"],
            prepare=prepare)
