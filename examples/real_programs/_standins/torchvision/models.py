"""Stand-ins for torchvision.models.resnet18 (siamese_network) and vgg16 (fast_neural_style).

resnet18: the ResNet-18 layout
with torchvision's module names (conv1, bn1, layer1..4 of two BasicBlocks, avgpool, fc), so that
state_dicts carry the same keys; its own initialisation, as the runs sync their weights anyway."""
import torch
from torch import nn


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False),
                                            nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(BasicBlock(64, 64), BasicBlock(64, 64))
        self.layer2 = nn.Sequential(BasicBlock(64, 128, 2), BasicBlock(128, 128))
        self.layer3 = nn.Sequential(BasicBlock(128, 256, 2), BasicBlock(256, 256))
        self.layer4 = nn.Sequential(BasicBlock(256, 512, 2), BasicBlock(512, 512))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet18(weights=None, num_classes=1000):
    if weights is not None:
        raise ValueError("the stand-in torchvision has no pretrained weights")
    return ResNet(num_classes)


class _Weights:
    """A stand-in for a torchvision weights enum member: no file is downloaded, the model keeps
    its own initialisation (the runs sync their weights)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"VGG16_Weights.{self.name}"


class VGG16_Weights:
    IMAGENET1K_V1 = _Weights("IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class VGG(nn.Module):
    """torchvision's VGG-16 `features` (13 3x3 convolutions with in-place ReLUs, 5 max pools; the
    same indices), then average pooling and the classifier."""

    def __init__(self, num_classes=1000):
        super().__init__()
        layers, channels = [], 3
        for v in (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
                  512, 512, 512, "M"):
            if v == "M":
                layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            else:
                layers += [nn.Conv2d(channels, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
                channels = v
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(),
                                        nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(),
                                        nn.Linear(4096, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


def vgg16(weights=None, num_classes=1000):
    if weights is not None and not isinstance(weights, _Weights):
        raise ValueError(f"unknown weights {weights!r}")
    return VGG(num_classes)
