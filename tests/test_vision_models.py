"""ember.vision.models.resnet*: torchvision's module tree, names and shapes, checked against a
reference ResNet written below in torch.nn with torchvision's naming (torchvision itself is not
installable next to torch 2.13), plus a literal list of torchvision resnet18's state_dict keys.

Values: outputs (eval and train mode), running statistics and gradients match torch with the
same weights, copied through numpy and through a torch.save file read by ember.load.
"""
import math
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.vision import models

from nn_helpers import DTYPES, np_of


# ======================================================== the torch reference
class BasicBlock(torch.nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or torch.nn.BatchNorm2d
        self.conv1 = torch.nn.Conv2d(inplanes, planes, 3, stride, padding=1, bias=False)
        self.bn1 = norm_layer(planes)
        self.relu = torch.nn.ReLU(inplace=True)
        self.conv2 = torch.nn.Conv2d(planes, planes, 3, 1, padding=1, bias=False)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample

    def forward(self, x):
        out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        out = out + (x if self.downsample is None else self.downsample(x))
        return self.relu(out)


class Bottleneck(torch.nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or torch.nn.BatchNorm2d
        width = int(planes * base_width / 64) * groups
        self.conv1 = torch.nn.Conv2d(inplanes, width, 1, bias=False)
        self.bn1 = norm_layer(width)
        self.conv2 = torch.nn.Conv2d(width, width, 3, stride, padding=dilation, groups=groups,
                                     dilation=dilation, bias=False)
        self.bn2 = norm_layer(width)
        self.conv3 = torch.nn.Conv2d(width, planes * 4, 1, bias=False)
        self.bn3 = norm_layer(planes * 4)
        self.relu = torch.nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out = out + (x if self.downsample is None else self.downsample(x))
        return self.relu(out)


class ResNet(torch.nn.Module):
    def __init__(self, block, layers, num_classes=1000, groups=1, width_per_group=64,
                 replace_stride_with_dilation=(False, False, False), norm_layer=None):
        super().__init__()
        self.norm_layer = norm_layer or torch.nn.BatchNorm2d
        self.block, self.inplanes, self.dilation = block, 64, 1
        self.groups, self.base_width = groups, width_per_group
        self.conv1 = torch.nn.Conv2d(3, 64, 7, 2, padding=3, bias=False)
        self.bn1 = self.norm_layer(64)
        self.relu = torch.nn.ReLU(inplace=True)
        self.maxpool = torch.nn.MaxPool2d(3, 2, 1)
        self.layer1 = self.stage(64, layers[0], 1, False)
        self.layer2 = self.stage(128, layers[1], 2, replace_stride_with_dilation[0])
        self.layer3 = self.stage(256, layers[2], 2, replace_stride_with_dilation[1])
        self.layer4 = self.stage(512, layers[3], 2, replace_stride_with_dilation[2])
        self.avgpool = torch.nn.AdaptiveAvgPool2d((1, 1))
        self.fc = torch.nn.Linear(512 * block.expansion, num_classes)

    def stage(self, planes, blocks, stride, dilate):
        out_planes = planes * self.block.expansion
        first_dilation = self.dilation
        if dilate:
            self.dilation, stride = self.dilation * stride, 1
        downsample = None
        if stride != 1 or self.inplanes != out_planes:
            downsample = torch.nn.Sequential(
                torch.nn.Conv2d(self.inplanes, out_planes, 1, stride, bias=False),
                self.norm_layer(out_planes))
        kw = dict(groups=self.groups, base_width=self.base_width, norm_layer=self.norm_layer)
        layers = [self.block(self.inplanes, planes, stride, downsample, dilation=first_dilation,
                             **kw)]
        self.inplanes = out_planes
        layers += [self.block(out_planes, planes, dilation=self.dilation, **kw)
                   for _ in range(blocks - 1)]
        return torch.nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def reference(name, **kwargs):
    """The torch twin of ember.vision.models.<name>."""
    layers = {"resnet18": (BasicBlock, [2, 2, 2, 2]), "resnet34": (BasicBlock, [3, 4, 6, 3]),
              "resnet50": (Bottleneck, [3, 4, 6, 3]), "resnet101": (Bottleneck, [3, 4, 23, 3]),
              "resnext50_32x4d": (Bottleneck, [3, 4, 6, 3]),
              "wide_resnet50_2": (Bottleneck, [3, 4, 6, 3])}[name]
    kwargs.update({"resnext50_32x4d": dict(groups=32, width_per_group=4),
                   "wide_resnet50_2": dict(width_per_group=128)}.get(name, {}))
    return ResNet(*layers, **kwargs)


# ================================================================ helpers
@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """The reference convolutions dominate this file's time; on a small shared machine one
    torch thread is faster than oversubscribed ones. Restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def randomise(model, seed=0):
    """Give the torch model's BN layers non-trivial affine parameters and running statistics,
    so that a mismatch anywhere in the tree shows up in the outputs."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.copy_(1 + 0.1 * torch.randn(m.weight.shape, generator=g))
                m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=g))
                m.running_mean.copy_(0.1 * torch.randn(m.running_mean.shape, generator=g))
                m.running_var.copy_(1 + torch.rand(m.running_var.shape, generator=g))
                m.num_batches_tracked.fill_(3)
    return model


def ember_state(torch_model):
    """torch's state_dict as ember tensors, through numpy."""
    return {k: ember.tensor(v.numpy().copy(), dtype=DTYPES[v.dtype])
            for k, v in torch_model.state_dict().items()}


def pair(name, seed=0, **kwargs):
    """(torch reference, ember model) with the same weights."""
    torch.manual_seed(seed)
    t_model = randomise(reference(name, **kwargs), seed)
    e_model = getattr(models, name)(**kwargs)
    result = e_model.load_state_dict(ember_state(t_model))
    assert repr(result) == "<All keys matched successfully>"
    return t_model, e_model


def close(e, t, rtol, atol, what):
    assert tuple(e.shape) == tuple(t.shape), what
    assert str(e.dtype).replace("ember.", "") == str(t.dtype).replace("torch.", ""), what
    np.testing.assert_allclose(np_of(e), np_of(t), rtol=rtol, atol=atol, err_msg=what)


def image(seed, shape=(2, 3, 64, 64), dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ========================================================= structure and names
# torchvision resnet18's state_dict, written down: its first and last entries, the downsample
# shortcut of layer2, and the size of the whole thing
RESNET18_FIRST = [
    ("conv1.weight", (64, 3, 7, 7)), ("bn1.weight", (64,)), ("bn1.bias", (64,)),
    ("bn1.running_mean", (64,)), ("bn1.running_var", (64,)), ("bn1.num_batches_tracked", ()),
    ("layer1.0.conv1.weight", (64, 64, 3, 3)), ("layer1.0.bn1.weight", (64,)),
    ("layer1.0.bn1.bias", (64,)), ("layer1.0.bn1.running_mean", (64,)),
    ("layer1.0.bn1.running_var", (64,)), ("layer1.0.bn1.num_batches_tracked", ()),
    ("layer1.0.conv2.weight", (64, 64, 3, 3)), ("layer1.0.bn2.weight", (64,)),
]
RESNET18_LAST = [
    ("layer4.1.conv2.weight", (512, 512, 3, 3)), ("layer4.1.bn2.weight", (512,)),
    ("layer4.1.bn2.bias", (512,)), ("layer4.1.bn2.running_mean", (512,)),
    ("layer4.1.bn2.running_var", (512,)), ("layer4.1.bn2.num_batches_tracked", ()),
    ("fc.weight", (1000, 512)), ("fc.bias", (1000,)),
]
RESNET18_SOME = {
    "layer2.0.conv1.weight": (128, 64, 3, 3), "layer2.0.downsample.0.weight": (128, 64, 1, 1),
    "layer2.0.downsample.1.weight": (128,), "layer2.0.downsample.1.running_var": (128,),
    "layer3.1.conv1.weight": (256, 256, 3, 3), "layer4.0.downsample.0.weight": (512, 256, 1, 1),
}


def shapes(model):
    return [(k, tuple(v.shape)) for k, v in model.state_dict().items()]


def test_resnet18_state_dict_is_torchvisions():
    for model in (models.resnet18(), reference("resnet18")):    # ember, and the reference too
        entries = shapes(model)
        assert len(entries) == 122
        assert entries[:len(RESNET18_FIRST)] == RESNET18_FIRST
        assert entries[-len(RESNET18_LAST):] == RESNET18_LAST
        assert {k: s for k, s in entries if k in RESNET18_SOME} == RESNET18_SOME
        assert not any(".downsample." in k for k, _ in entries
                       if k.startswith(("layer1.", "layer2.1.", "layer3.1.", "layer4.1.")))
    assert len(models.resnet18().state_dict()) == 122
    params = list(models.resnet18().named_parameters())
    assert len(params) == 62
    assert sum(p.numel() for _, p in params) == 11689512      # torchvision's resnet18 size


@pytest.mark.parametrize("name,count", [("resnet18", 122), ("resnet34", 218),
                                        ("resnet50", 320), ("resnext50_32x4d", 320),
                                        ("wide_resnet50_2", 320)])
def test_names_shapes_and_repr_match_reference(name, count):
    e_model, t_model = getattr(models, name)(), reference(name)
    assert shapes(e_model) == shapes(t_model)
    assert len(shapes(e_model)) == count
    assert [n for n, _ in e_model.named_modules()] == [n for n, _ in t_model.named_modules()]
    assert repr(e_model) == repr(t_model)
    e_buffers = [(n, tuple(b.shape)) for n, b in e_model.named_buffers()]
    assert e_buffers == [(n, tuple(b.shape)) for n, b in t_model.named_buffers()]


def test_parameter_counts():
    # torchvision's published sizes
    assert sum(p.numel() for p in models.resnet34().parameters()) == 21797672
    assert sum(p.numel() for p in models.resnet50().parameters()) == 25557032


def test_num_classes_and_block_attributes():
    model = models.resnet18(num_classes=10)
    assert tuple(model.fc.weight.shape) == (10, 512)
    assert isinstance(model.layer1[0], models.BasicBlock)
    assert model.layer1[0].downsample is None and model.layer1[0].stride == 1
    assert model.layer2[0].stride == 2
    assert isinstance(model.layer2[0].downsample, ember.nn.Sequential)
    assert models.BasicBlock.expansion == 1 and models.Bottleneck.expansion == 4
    assert models.resnet50().fc.in_features == 2048
    assert model(ember.randn(2, 3, 32, 32)).shape == (2, 10)


def test_resnet_class_builds_from_blocks():
    model = models.ResNet(models.BasicBlock, [1, 1, 1, 1], num_classes=7)
    t_model = ResNet(BasicBlock, [1, 1, 1, 1], num_classes=7)
    assert shapes(model) == shapes(t_model) and repr(model) == repr(t_model)


# ================================================================= values
def check_train_step(t_model, e_model, x, rtol=1e-6):
    """Train mode in float64 (batch statistics): outputs, every gradient and the updated
    running statistics agree with torch to float64 rounding."""
    t_model.double().train()
    e_model.double().train()
    t_x = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    e_x = ember.tensor(x, dtype=ember.float64, requires_grad=True)
    t_out, e_out = t_model(t_x), e_model(e_x)
    close(e_out.detach(), t_out.detach(), rtol, 1e-9, "train output")
    w = np.random.default_rng(2).standard_normal(tuple(t_out.shape))
    (t_out * torch.tensor(w)).sum().backward()
    (e_out * ember.tensor(w)).sum().backward()
    close(e_x.grad, t_x.grad, rtol, 1e-9, "input grad")
    t_params, e_params = dict(t_model.named_parameters()), dict(e_model.named_parameters())
    assert list(t_params) == list(e_params)
    for k, tp in t_params.items():
        close(e_params[k].grad, tp.grad, rtol, 1e-9 * float(tp.grad.abs().max()), f"grad {k}")
    for (k, tb), (_, eb) in zip(t_model.named_buffers(), e_model.named_buffers()):
        close(eb, tb, rtol, 1e-9, f"buffer {k}")


@pytest.mark.parametrize("name,size", [("resnet18", 64), ("resnet34", 48)])
def test_eval_and_train_outputs_and_gradients_match_torch(name, size):
    t_model, e_model = pair(name)
    x = image(1, (2, 3, size, size))
    # eval, float32: running statistics
    t_model.eval()
    e_model.eval()
    with torch.no_grad():
        t_out = t_model(torch.tensor(x))
    e_out = e_model(ember.tensor(x))
    assert e_out.requires_grad and type(e_out.grad_fn).__name__ == "AddmmBackward0"
    close(e_out.detach(), t_out, 1e-4, 1e-4, "eval output")
    check_train_step(t_model, e_model, x)


def test_bottleneck_groups_and_dilation_match_torch():
    # Bottleneck blocks with grouped 3x3 convolutions, and replace_stride_with_dilation on the
    # last two stages (layer4's second block is dilated twice as much as its first)
    kwargs = dict(num_classes=10, groups=2, width_per_group=16,
                  replace_stride_with_dilation=[False, True, True])
    torch.manual_seed(3)
    t_model = randomise(ResNet(Bottleneck, [1, 1, 1, 2], **kwargs), seed=3)
    e_model = models.ResNet(models.Bottleneck, [1, 1, 1, 2], **kwargs)
    e_model.load_state_dict(ember_state(t_model))
    assert repr(e_model) == repr(t_model)
    assert e_model.layer4[0].conv2.dilation == (2, 2) and e_model.layer4[0].conv2.stride == (1, 1)
    assert e_model.layer4[1].conv2.dilation == (4, 4) and e_model.layer4[1].conv2.groups == 2
    x = image(4, (2, 3, 32, 32))
    t_model.eval()
    e_model.eval()
    with torch.no_grad():
        close(e_model(ember.tensor(x)).detach(), t_model(torch.tensor(x)), 1e-4, 1e-4, "eval")
    check_train_step(t_model, e_model, x)


def test_torch_saved_state_dict_file_loads_with_ember_load(tmp_path):
    t_model = randomise(reference("resnet18"), seed=5).eval()
    path = tmp_path / "resnet18.pth"
    torch.save(t_model.state_dict(), path)
    e_model = models.resnet18()
    result = e_model.load_state_dict(ember.load(path))        # strict
    assert repr(result) == "<All keys matched successfully>"
    e_model.eval()
    x = image(6)
    with torch.no_grad():
        t_out = t_model(torch.tensor(x))
    with ember.no_grad():
        e_out = e_model(ember.tensor(x))
    close(e_out, t_out, 1e-4, 1e-4, "output")
    assert int(e_model.bn1.num_batches_tracked) == 3
    assert e_model.bn1.num_batches_tracked.dtype == ember.int64
    # and back: ember's state_dict saved by ember.save loads into torch
    ember.save(e_model.state_dict(), tmp_path / "back.pth")
    t_again = reference("resnet18")
    t_again.load_state_dict(torch.load(tmp_path / "back.pth"))
    for (k, a), b in zip(t_model.state_dict().items(), t_again.state_dict().values()):
        assert torch.equal(a, b), k


def test_strict_loading_reports_torchvision_keys():
    model = models.resnet18()
    state = model.state_dict()
    del state["fc.bias"]
    state["fc.extra"] = ember.zeros(1)
    with pytest.raises(RuntimeError) as info:
        model.load_state_dict(state)
    assert 'Missing key(s) in state_dict: "fc.bias"' in str(info.value)
    assert 'Unexpected key(s) in state_dict: "fc.extra"' in str(info.value)


# ==================================================== the seed's transfer learning
def test_transfer_learning_trains_only_the_new_fc():
    t_model, model = pair("resnet18", seed=7)
    for net in (t_model, model):
        for param in net.parameters():
            param.requires_grad = False
    x = image(8, (4, 3, 32, 32))
    # everything frozen: no graph (both forwards also step the BN running statistics)
    assert model(ember.tensor(x)).requires_grad is t_model(torch.tensor(x)).requires_grad is False
    torch.manual_seed(0)
    t_model.fc = torch.nn.Linear(512, 100)
    model.fc = ember.nn.Linear(512, 100)
    assert model.fc.weight.requires_grad and model.fc.bias.requires_grad
    model.fc.load_state_dict(ember_state(t_model.fc))
    t_opt = torch.optim.SGD(t_model.fc.parameters(), lr=1e-2, momentum=0.9)
    optimizer = ember.optim.SGD(model.fc.parameters(), lr=1e-2, momentum=0.9)
    frozen = {k: v.detach().clone() for k, v in model.named_parameters()
              if not k.startswith("fc.")}
    fc_before = model.fc.weight.detach().clone()
    target = np.array([3, 14, 15, 92])
    for _ in range(3):
        t_opt.zero_grad()
        t_loss = torch.nn.functional.cross_entropy(t_model(torch.tensor(x)),
                                                   torch.tensor(target))
        t_loss.backward()
        t_opt.step()
        optimizer.zero_grad()
        loss = ember.nn.functional.cross_entropy(model(ember.tensor(x)), ember.tensor(target))
        loss.backward()
        optimizer.step()
        close(loss.detach(), t_loss.detach(), 1e-4, 1e-5, "loss")
    for k, p in model.named_parameters():
        if k.startswith("fc."):
            assert p.requires_grad and p.grad is not None, k
        else:
            assert p.requires_grad is False and p.grad is None, k
            assert ember.equal(p, frozen[k]), f"{k} changed"
    assert not ember.equal(model.fc.weight, fc_before)
    close(model.fc.weight.detach(), t_model.fc.weight.detach(), 1e-4, 1e-5, "fc.weight")
    close(model.fc.bias.detach(), t_model.fc.bias.detach(), 1e-4, 1e-5, "fc.bias")
    # train mode still updates the frozen BN layers' running statistics, as in torch
    close(model.bn1.running_mean, t_model.bn1.running_mean, 1e-4, 1e-6, "running_mean")


# =========================================================== initialisation
def test_torchvision_initialisation():
    ember.manual_seed(0)
    model = models.resnet50()
    for name, m in model.named_modules():
        if isinstance(m, ember.nn.Conv2d):
            w = m.weight.detach().numpy()
            fan_out = w.shape[0] * w.shape[2] * w.shape[3]
            # kaiming normal, mode fan_out, relu gain: std = sqrt(2 / fan_out)
            if w.size >= 4096:
                assert abs(w.std() / math.sqrt(2.0 / fan_out) - 1) < 0.1, name
                assert abs(w.mean()) < 0.1 * math.sqrt(2.0 / fan_out), name
        elif isinstance(m, ember.nn.BatchNorm2d):
            assert (m.weight.detach().numpy() == 1).all() and (m.bias.detach().numpy() == 0).all()
    bound = 1 / math.sqrt(2048)                   # nn.Linear's own default for fc
    fc = model.fc.weight.detach().numpy()
    assert np.abs(fc).max() <= bound and np.abs(fc).max() > 0.9 * bound


def test_zero_init_residual():
    basic = models.resnet18(zero_init_residual=True)
    assert all((b.bn2.weight.detach().numpy() == 0).all() for layer in
               (basic.layer1, basic.layer2, basic.layer3, basic.layer4) for b in layer)
    assert (basic.layer1[0].bn1.weight.detach().numpy() == 1).all()
    assert (basic.layer2[0].downsample[1].weight.detach().numpy() == 1).all()
    bottle = models.resnet50(zero_init_residual=True)
    assert (bottle.layer3[2].bn3.weight.detach().numpy() == 0).all()
    assert (bottle.layer3[2].bn2.weight.detach().numpy() == 1).all()
    assert (models.resnet18().layer1[0].bn2.weight.detach().numpy() == 1).all()


def test_custom_norm_layer():
    model = models.resnet18(norm_layer=lambda c: ember.nn.GroupNorm(32, c), num_classes=5)
    t_model = reference("resnet18", norm_layer=lambda c: torch.nn.GroupNorm(32, c),
                        num_classes=5)
    assert shapes(model) == shapes(t_model) and repr(model) == repr(t_model)
    assert (model.layer1[0].bn1.weight.detach().numpy() == 1).all()
    t_model.eval()
    model.load_state_dict(ember_state(t_model))
    x = image(9, (1, 3, 32, 32))
    with torch.no_grad():
        close(model(ember.tensor(x)).detach(), t_model(torch.tensor(x)), 1e-4, 1e-4, "output")


# ==================================================================== errors
@pytest.mark.parametrize("weights,shown", [
    ("DEFAULT", "'DEFAULT'"), ("IMAGENET1K_V1", "'IMAGENET1K_V1'"),
    (models.ResNet18_Weights.DEFAULT, "ResNet18_Weights.IMAGENET1K_V1"),
    (models.ResNet18_Weights.IMAGENET1K_V1, "ResNet18_Weights.IMAGENET1K_V1")])
def test_pretrained_weights_raise_a_clear_error(weights, shown):
    with pytest.raises(RuntimeError) as info:
        models.resnet18(weights=weights)
    message = str(info.value)
    assert message.startswith(f"resnet18(weights={shown}): ember cannot download pretrained "
                              f"weights (it has no network access).")
    assert message.endswith("\n    model = ember.vision.models.resnet18()\n"
                            "    model.load_state_dict(ember.load('/path/to/resnet18.pth'))")
    with pytest.raises(RuntimeError, match=r"^resnet34\(weights="):
        models.resnet34(weights=weights)


def test_weight_enums_name_torchvisions_checkpoints():
    assert models.ResNet18_Weights.DEFAULT is models.ResNet18_Weights.IMAGENET1K_V1
    assert models.ResNet50_Weights.DEFAULT is models.ResNet50_Weights.IMAGENET1K_V2
    assert [w.name for w in models.ResNet50_Weights] == ["IMAGENET1K_V1", "IMAGENET1K_V2"]
    with pytest.raises(RuntimeError, match=r"^wide_resnet50_2\(weights=Wide_ResNet50_2_Weights"
                                           r"\.IMAGENET1K_V2\): ember cannot download"):
        models.wide_resnet50_2(weights=models.Wide_ResNet50_2_Weights.DEFAULT)


def test_legacy_pretrained_argument():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="ember cannot download pretrained weights"):
            models.resnet18(pretrained=True)
        model = models.resnet18(pretrained=False)
    assert isinstance(model, models.ResNet)
    assert [str(w.message) for w in caught] == [
        "The parameter 'pretrained' is deprecated, please use 'weights' instead."] * 2


def test_argument_errors():
    with pytest.raises(ValueError, match=r"^BasicBlock only supports groups=1 and "
                                         r"base_width=64$"):
        models.resnet18(groups=2)
    with pytest.raises(NotImplementedError, match=r"^Dilation > 1 not supported in BasicBlock$"):
        models.resnet18(replace_stride_with_dilation=[False, False, True])
    with pytest.raises(ValueError, match=r"^replace_stride_with_dilation should be None or a "
                                         r"3-element tuple, got \[True\]$"):
        models.resnet50(replace_stride_with_dilation=[True])
    with pytest.raises(ValueError, match=r"^The parameter 'groups' expected value 32 but got 8 "
                                         r"instead\.$"):
        models.resnext50_32x4d(groups=8)
    with pytest.raises(TypeError):
        models.resnet18(None)                    # weights is keyword-only, as in torchvision
