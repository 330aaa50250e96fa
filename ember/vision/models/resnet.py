"""ResNet (He et al., "Deep Residual Learning for Image Recognition", 2015) for ember.

The module tree, attribute names, constructor arguments and weight initialisation follow
torchvision's `torchvision.models.resnet`, so every parameter and buffer has torchvision's name
and shape and a torchvision state_dict loads with `load_state_dict` (strict):

    model = resnet18()
    model.load_state_dict(ember.load("resnet18.pth"))    # a file written by torch.save

ember has no network access, so it cannot download pretrained weights: `weights=` must be None.
"""
import enum
import warnings

from ... import nn
from ...ops.views import flatten

__all__ = ["ResNet", "BasicBlock", "Bottleneck", "ResNet18_Weights", "ResNet34_Weights",
           "ResNet50_Weights", "ResNet101_Weights", "ResNet152_Weights",
           "ResNeXt50_32X4D_Weights", "ResNeXt101_32X8D_Weights", "ResNeXt101_64X4D_Weights",
           "Wide_ResNet50_2_Weights", "Wide_ResNet101_2_Weights", "resnet18", "resnet34", "resnet50",
           "resnet101", "resnet152", "resnext50_32x4d", "resnext101_32x8d", "resnext101_64x4d",
           "wide_resnet50_2", "wide_resnet101_2"]


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    """3x3 convolution whose padding keeps the spatial size (at stride 1)."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation,
                     groups=groups, bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    """1x1 convolution: changes the channel count (and, with a stride, the resolution)."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions plus the shortcut (ResNet-18/34)."""
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        # conv1 carries the stride; downsample (when given) maps the input to the output shape
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += x if self.downsample is None else self.downsample(x)
        return self.relu(out)


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (carrying the stride, as in torchvision's "ResNet V1.5"), 1x1 expand
    by `expansion`, plus the shortcut (ResNet-50/101/152, ResNeXt, Wide ResNet)."""
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out += x if self.downsample is None else self.downsample(x)
        return self.relu(out)


class ResNet(nn.Module):
    """Stem (7x7 conv, BN, ReLU, 3x3 max-pool), four stages of residual blocks, global average
    pool and a linear classifier. `layers` gives the number of blocks in each stage."""

    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1,
                 width_per_group=64, replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        self._norm_layer = norm_layer
        self.inplanes = 64          # channels entering the next block; _make_layer advances it
        self.dilation = 1
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None or a 3-element tuple, "
                             f"got {replace_stride_with_dilation}")
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2,
                                       dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2,
                                       dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2,
                                       dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

        # torchvision's initialisation; fc keeps nn.Linear's default
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        # Zero the last BN of each residual branch so every block starts as the identity
        # (https://arxiv.org/abs/1706.02677).
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        """One stage: the first block changes stride/width (with a 1x1 downsample shortcut when
        the shape changes), the rest keep it. With `dilate`, the stride becomes dilation."""
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width,
                        previous_dilation, norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups,
                                base_width=self.base_width, dilation=self.dilation,
                                norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def _forward_impl(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)
        x = self.avgpool(x)
        x = flatten(x, 1)
        return self.fc(x)

    def forward(self, x):
        return self._forward_impl(x)


# ============================================================ weight names
# torchvision's names for its pretrained checkpoints, so that code naming them (for example
# `weights=ResNet18_Weights.DEFAULT`) runs up to the builder, which then explains that ember
# cannot download them. They carry no URL, transforms or metadata.
class ResNet18_Weights(enum.Enum):
    IMAGENET1K_V1 = "IMAGENET1K_V1"
    DEFAULT = IMAGENET1K_V1


class ResNet34_Weights(enum.Enum):
    IMAGENET1K_V1 = "IMAGENET1K_V1"
    DEFAULT = IMAGENET1K_V1


class ResNet50_Weights(enum.Enum):
    IMAGENET1K_V1 = "IMAGENET1K_V1"
    IMAGENET1K_V2 = "IMAGENET1K_V2"
    DEFAULT = IMAGENET1K_V2


class ResNet101_Weights(enum.Enum):
    IMAGENET1K_V1 = "IMAGENET1K_V1"
    IMAGENET1K_V2 = "IMAGENET1K_V2"
    DEFAULT = IMAGENET1K_V2


class ResNet152_Weights(enum.Enum):
    IMAGENET1K_V1 = "IMAGENET1K_V1"
    IMAGENET1K_V2 = "IMAGENET1K_V2"
    DEFAULT = IMAGENET1K_V2


class ResNeXt50_32X4D_Weights(enum.Enum):
    IMAGENET1K_V1 = "IMAGENET1K_V1"
    IMAGENET1K_V2 = "IMAGENET1K_V2"
    DEFAULT = IMAGENET1K_V2


class ResNeXt101_32X8D_Weights(enum.Enum):
    IMAGENET1K_V1 = "IMAGENET1K_V1"
    IMAGENET1K_V2 = "IMAGENET1K_V2"
    DEFAULT = IMAGENET1K_V2


class ResNeXt101_64X4D_Weights(enum.Enum):
    IMAGENET1K_V1 = "IMAGENET1K_V1"
    DEFAULT = IMAGENET1K_V1


class Wide_ResNet50_2_Weights(enum.Enum):
    IMAGENET1K_V1 = "IMAGENET1K_V1"
    IMAGENET1K_V2 = "IMAGENET1K_V2"
    DEFAULT = IMAGENET1K_V2


class Wide_ResNet101_2_Weights(enum.Enum):
    IMAGENET1K_V1 = "IMAGENET1K_V1"
    IMAGENET1K_V2 = "IMAGENET1K_V2"
    DEFAULT = IMAGENET1K_V2


# ================================================================== builders
def _no_download_error(builder, weights):
    name = str(weights) if isinstance(weights, enum.Enum) else repr(weights)
    return RuntimeError(
        f"{builder}(weights={name}): ember cannot download pretrained weights (it has no "
        f"network access). Build the model with weights=None and load a state_dict file you "
        f"have locally instead; ember.load reads files written by torch.save, such as the .pth "
        f"files torchvision keeps in ~/.cache/torch/hub/checkpoints/:\n"
        f"    model = ember.vision.models.{builder}()\n"
        f"    model.load_state_dict(ember.load('/path/to/{builder}.pth'))")


def _fix(kwargs, name, value):
    """Set an argument the architecture fixes; a caller's different value is an error."""
    if kwargs.get(name, value) != value:
        raise ValueError(f"The parameter '{name}' expected value {value} but got "
                         f"{kwargs[name]} instead.")
    kwargs[name] = value


def _resnet(builder, block, layers, weights, progress, kwargs):
    """Build the model; `progress` only matters for downloads, which ember never does."""
    # torchvision's legacy spelling: pretrained=True meant the default pretrained weights
    if "pretrained" in kwargs:
        pretrained = kwargs.pop("pretrained")
        warnings.warn("The parameter 'pretrained' is deprecated, please use 'weights' instead.",
                      UserWarning, stacklevel=3)
        if pretrained:
            weights = "DEFAULT" if weights is None else weights
    if weights is not None:
        raise _no_download_error(builder, weights)
    return ResNet(block, layers, **kwargs)


def resnet18(*, weights=None, progress=True, **kwargs):
    """ResNet-18: BasicBlock, [2, 2, 2, 2]."""
    return _resnet("resnet18", BasicBlock, [2, 2, 2, 2], weights, progress, kwargs)


def resnet34(*, weights=None, progress=True, **kwargs):
    """ResNet-34: BasicBlock, [3, 4, 6, 3]."""
    return _resnet("resnet34", BasicBlock, [3, 4, 6, 3], weights, progress, kwargs)


def resnet50(*, weights=None, progress=True, **kwargs):
    """ResNet-50: Bottleneck, [3, 4, 6, 3]."""
    return _resnet("resnet50", Bottleneck, [3, 4, 6, 3], weights, progress, kwargs)


def resnet101(*, weights=None, progress=True, **kwargs):
    """ResNet-101: Bottleneck, [3, 4, 23, 3]."""
    return _resnet("resnet101", Bottleneck, [3, 4, 23, 3], weights, progress, kwargs)


def resnet152(*, weights=None, progress=True, **kwargs):
    """ResNet-152: Bottleneck, [3, 8, 36, 3]."""
    return _resnet("resnet152", Bottleneck, [3, 8, 36, 3], weights, progress, kwargs)


def resnext50_32x4d(*, weights=None, progress=True, **kwargs):
    """ResNeXt-50 32x4d: ResNet-50 with 32 groups of width 4 in each 3x3 convolution."""
    _fix(kwargs, "groups", 32)
    _fix(kwargs, "width_per_group", 4)
    return _resnet("resnext50_32x4d", Bottleneck, [3, 4, 6, 3], weights, progress, kwargs)


def resnext101_32x8d(*, weights=None, progress=True, **kwargs):
    """ResNeXt-101 32x8d."""
    _fix(kwargs, "groups", 32)
    _fix(kwargs, "width_per_group", 8)
    return _resnet("resnext101_32x8d", Bottleneck, [3, 4, 23, 3], weights, progress, kwargs)


def resnext101_64x4d(*, weights=None, progress=True, **kwargs):
    """ResNeXt-101 64x4d."""
    _fix(kwargs, "groups", 64)
    _fix(kwargs, "width_per_group", 4)
    return _resnet("resnext101_64x4d", Bottleneck, [3, 4, 23, 3], weights, progress, kwargs)


def wide_resnet50_2(*, weights=None, progress=True, **kwargs):
    """Wide ResNet-50-2: ResNet-50 with the bottleneck's inner width doubled."""
    _fix(kwargs, "width_per_group", 64 * 2)
    return _resnet("wide_resnet50_2", Bottleneck, [3, 4, 6, 3], weights, progress, kwargs)


def wide_resnet101_2(*, weights=None, progress=True, **kwargs):
    """Wide ResNet-101-2."""
    _fix(kwargs, "width_per_group", 64 * 2)
    return _resnet("wide_resnet101_2", Bottleneck, [3, 4, 23, 3], weights, progress, kwargs)
