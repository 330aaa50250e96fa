"""Synthetic stand-ins for torchvision.datasets (no files, no downloads)."""
import os

import numpy as np
import torch


def _size(default):
    # runners shrink the data sets through this variable
    return int(os.environ.get("STANDIN_DATASET_SIZE", default))


class _ArrayDataset(torch.utils.data.Dataset):
    def __init__(self, images, labels, transform=None, target_transform=None):
        self.images, self.labels = images, labels
        self.transform, self.target_transform = transform, target_transform

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        image, label = self.images[index], int(self.labels[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return image, label


class MNIST(_ArrayDataset):
    """28x28 uint8 'digits': a class-dependent blob plus noise, so a model can learn something."""

    def __init__(self, root, train=True, download=False, transform=None, target_transform=None):
        n = _size(512 if train else 256)
        rng = np.random.RandomState(0 if train else 1)
        labels = rng.randint(0, 10, size=n)
        yy, xx = np.mgrid[0:28, 0:28]
        images = np.empty((n, 28, 28), dtype=np.uint8)
        for i, c in enumerate(labels):
            cy, cx = 6 + 2 * (c % 5) + rng.randint(-1, 2), 8 + 3 * (c // 5) + rng.randint(-1, 2)
            blob = 255 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 18.0)
            images[i] = np.clip(blob + rng.randint(0, 40, size=(28, 28)), 0, 255).astype(np.uint8)
        super().__init__(images, labels, transform, target_transform)
        # torchvision's attributes: the images as a uint8 tensor (N, 28, 28), the labels as int64
        self.data = torch.from_numpy(images)
        self.targets = torch.from_numpy(labels.astype(np.int64))


class FakeData(_ArrayDataset):
    """Like torchvision's FakeData: random images (HWC uint8 here) and random labels."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        n = min(size, _size(size))
        rng = np.random.RandomState(random_offset)
        c, h, w = image_size
        images = rng.randint(0, 256, size=(n, h, w, c)).astype(np.uint8)
        labels = rng.randint(0, num_classes, size=n)
        super().__init__(images, labels, transform, target_transform)


class CIFAR10(_ArrayDataset):
    """32x32x3 uint8 'photos': a class-coloured square on noise, so a model can learn something."""

    def __init__(self, root, train=True, download=False, transform=None, target_transform=None):
        n = _size(512 if train else 256)
        rng = np.random.RandomState(2 if train else 3)
        labels = rng.randint(0, 10, size=n)
        images = rng.randint(0, 60, size=(n, 32, 32, 3)).astype(np.uint8)
        for i, c in enumerate(labels):
            y, x = rng.randint(0, 16, size=2)
            images[i, y:y + 16, x:x + 16, c % 3] = 120 + 12 * c
        super().__init__(images, labels, transform, target_transform)


class ImageFolder(torch.utils.data.Dataset):
    """Image files under root/<class>/ (classes and files in sorted order, as torchvision sorts
    them), read with PIL as RGB; items are (transform(image), class index)."""

    def __init__(self, root, transform=None, target_transform=None):
        from PIL import Image
        self._open = lambda path: Image.open(path).convert("RGB")
        self.classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}
        self.samples = [(os.path.join(root, c, f), self.class_to_idx[c]) for c in self.classes
                        for f in sorted(os.listdir(os.path.join(root, c)))]
        self.targets = [t for _, t in self.samples]
        self.transform, self.target_transform = transform, target_transform

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        path, target = self.samples[index]
        image = self._open(path)
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target
