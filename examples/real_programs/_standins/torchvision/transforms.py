"""Stand-ins for the torchvision.transforms the programs use; images are NumPy uint8 arrays
(HxW or HxWxC), as the stand-in data sets hand them out, or PIL images (super_resolution reads
its own image files)."""
import numpy as np
import torch


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


class ToTensor:
    def __call__(self, image):
        a = np.asarray(image)
        if a.ndim == 2:
            a = a[:, :, None]
        return torch.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)).astype(np.float32) / 255.0)


class Normalize:
    def __init__(self, mean, std):
        self.mean, self.std = mean, std

    def __call__(self, t):
        mean = torch.tensor(self.mean, dtype=t.dtype).view(-1, 1, 1)
        std = torch.tensor(self.std, dtype=t.dtype).view(-1, 1, 1)
        return (t - mean) / std


class Lambda:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, x):
        return self.fn(x)


class Pad:
    """Zero padding of an HxW(xC) array on every side (torchvision's default fill)."""

    def __init__(self, padding, fill=0):
        self.padding, self.fill = padding, fill

    def __call__(self, image):
        p = self.padding
        widths = [(p, p), (p, p)] + [(0, 0)] * (np.ndim(image) - 2)
        return np.pad(np.asarray(image), widths, constant_values=self.fill)


class RandomHorizontalFlip:
    """Flips with probability p, deciding by one torch.rand(1) draw (as torchvision does)."""

    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, image):
        if torch.rand(1) < self.p:
            return np.ascontiguousarray(np.asarray(image)[:, ::-1])
        return image


class RandomCrop:
    """A size x size crop at a corner drawn by two torch.randint calls (row, then column), as
    torchvision draws it."""

    def __init__(self, size):
        self.size = (size, size) if isinstance(size, int) else tuple(size)

    def __call__(self, image):
        a = np.asarray(image)
        th, tw = self.size
        h, w = a.shape[:2]
        i = torch.randint(0, h - th + 1, size=(1,)).item()
        j = torch.randint(0, w - tw + 1, size=(1,)).item()
        return a[i:i + th, j:j + tw]


class CenterCrop:
    """The central size x size part (top and left rounded as torchvision rounds them); the image
    must be at least that large (torchvision would pad it)."""

    def __init__(self, size):
        self.size = (size, size) if isinstance(size, int) else tuple(size)

    def __call__(self, image):
        th, tw = self.size
        if hasattr(image, "crop"):           # a PIL image
            w, h = image.size
        else:
            h, w = np.asarray(image).shape[:2]
        top, left = int(round((h - th) / 2.0)), int(round((w - tw) / 2.0))
        if hasattr(image, "crop"):
            return image.crop((left, top, left + tw, top + th))
        return np.asarray(image)[top:top + th, left:left + tw]


class Resize:
    """PIL images only: an int size makes the smaller edge that long (the aspect ratio kept, the
    longer edge truncated as torchvision truncates it), bilinear as torchvision's default."""

    def __init__(self, size):
        self.size = size

    def __call__(self, image):
        from PIL import Image
        w, h = image.size
        if isinstance(self.size, int):
            short, long = (w, h) if w <= h else (h, w)
            new_long = int(self.size * long / short)
            size = (self.size, new_long) if w <= h else (new_long, self.size)
        else:
            size = (self.size[1], self.size[0])
        return image.resize(size, Image.BILINEAR)
