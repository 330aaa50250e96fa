"""The API coverage tool (tools/api_coverage.py) and what it measures.

test_every_torch_name_is_in_ember_or_not_provided is the coverage gate: every public torch
name in the tool's scope is either in ember or listed, with a reason, in
tools/not_provided.toml. The other tests check the tool itself, so that the gate measures
what it says.
"""
import importlib.util
import os
import subprocess
import sys

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("api_coverage",
                                               os.path.join(ROOT, "tools", "api_coverage.py"))
cov = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cov)


@pytest.fixture(scope="module")
def excuses():
    return cov.load_not_provided()


@pytest.fixture(scope="module")
def reports(excuses):
    return cov.walk(excuses)


def test_every_torch_name_is_in_ember_or_not_provided(reports):
    missing = {r.name: [q[len(r.name) + 1:] for q in r.unexcused] for r in reports}
    missing = {m: names for m, names in missing.items() if names}
    assert not missing, "torch names neither in ember nor in tools/not_provided.toml:\n" + \
        "\n".join(f"{m}: {', '.join(names)}" for m, names in missing.items())


def test_nn_module_constructors_match_torch():
    mismatches = cov.nn_signature_mismatches()
    assert not mismatches, "\n".join(f"{n}: {'; '.join(d)}" for n, d in mismatches)


def test_not_provided_list_is_well_formed(excuses):
    assert excuses
    for ex in excuses:
        assert ex.reason.strip(), ex.group
        assert ex.patterns, ex.group
        assert all(p.startswith("torch.") for p in ex.patterns), ex.group


def test_not_provided_patterns_all_match_a_torch_name(reports, excuses):
    assert cov.dead_patterns(reports, excuses) == []


def test_not_provided_list_excuses_nothing_ember_has(reports, excuses):
    assert cov.needless_excuses(reports, excuses) == []


def test_scope_covers_the_listed_modules():
    scope = cov.torch_scope()
    assert scope[0] == "torch"
    for m in ("torch.nn.functional", "torch.optim.lr_scheduler", "torch.utils.data.sampler",
              "torch.backends.cudnn", "torch.nn.modules.conv", "torch.nn.modules.loss"):
        assert m in scope
    assert not any(m.startswith("torch.nn.modules._") for m in scope)


def test_public_names_drop_modules_and_typing_junk():
    import torch.nn.functional as F
    names = cov.public_names(F, use_all=False)
    assert "relu" in names and "conv2d" in names
    for junk in ("math", "warnings", "Optional", "Callable", "torch", "TYPE_CHECKING"):
        assert hasattr(F, junk) or junk == "TYPE_CHECKING"
        assert junk not in names
    # `__all__` decides when a module has one
    import torch.nn.init as init
    assert cov.public_names(init) == sorted(init.__all__)
    # the top level uses dir(): names programs use that torch's __all__ leaves out
    top = cov.public_names(torch, use_all=False)
    assert "set_default_dtype" in top and "channels_last" in top and "nn" not in top


def test_public_names_of_torch_property_modules():
    # torch.backends.cudnn is a module object of its own class; its flags are properties
    import torch.backends.cudnn as cudnn
    names = cov.public_names(cudnn, use_all=False)
    for n in ("benchmark", "deterministic", "enabled", "allow_tf32", "is_available", "version",
              "flags"):
        assert n in names
    assert "CudnnModule" not in names and "PropModule" not in names


def test_an_importable_module_is_reported_with_its_missing_names(excuses):
    rep = cov.walk_module("torch.nn.init", excuses)
    assert rep.importable and rep.error == ""
    assert rep.names == sorted(torch.nn.init.__all__)
    import ember.nn.init
    assert rep.missing == [f"torch.nn.init.{n}" for n in rep.names
                           if not hasattr(ember.nn.init, n)]
    assert rep.present == len(rep.names) - len(rep.missing)


def test_a_module_ember_lacks_is_reported_not_importable(monkeypatch, excuses):
    monkeypatch.setattr(cov, "ember_path", lambda p: "ember._no_such_module_for_the_test")
    rep = cov.walk_module("torch.nn.init", excuses)
    assert not rep.importable
    assert rep.error.startswith("ModuleNotFoundError: No module named 'ember._no_such_module")
    assert rep.present == 0 and len(rep.missing) == len(torch.nn.init.__all__) > 0


def test_excused_names_are_counted_apart(excuses):
    assert cov.excuse_for("torch.quantize_per_tensor", excuses) == "quantization"
    assert cov.excuse_for("torch.Tensor.q_scale", excuses) == "quantization"
    assert cov.excuse_for("torch.add", excuses) is None
    rep = cov.ModuleReport("torch", True, "", ["a", "b", "c"],
                           missing=["torch.b", "torch.c"], excused={"torch.c": "g"})
    assert rep.present == 1 and rep.unexcused == ["torch.b"]


def test_tensor_walk_covers_methods_and_properties(excuses):
    rep = cov.walk_tensor(excuses)
    for n in ("add", "shape", "grad", "backward", "is_leaf", "T"):
        assert n in rep.names and f"torch.Tensor.{n}" not in rep.missing


def test_signature_comparison_reports_differences():
    diffs = dict(cov.nn_signature_mismatches())
    import ember.nn
    for name, d in diffs.items():
        assert hasattr(ember.nn, name) and d
    assert "Linear" not in diffs and "Conv2d" not in diffs


def test_the_script_prints_the_report_and_the_markdown_table():
    env = dict(os.environ, PYTHONPATH=ROOT)
    script = os.path.join(ROOT, "tools", "api_coverage.py")
    out = subprocess.run([sys.executable, script], capture_output=True, text=True, env=env,
                         check=True).stdout
    assert "torch.nn.init: " in out and "\nsummary: " in out and "modules importable: " in out
    md = subprocess.run([sys.executable, script, "--markdown"], capture_output=True, text=True,
                        env=env, check=True).stdout
    assert md.startswith("| torch module | importable |")
    assert "| `torch.nn.init` | yes |" in md and "| **all** |" in md
