"""Measured coverage of torch's public API by ember.

Walks the public names of the torch modules ordinary programs use (SCOPE below), every
`torch.Tensor` method and property, and the constructor signature of every `torch.nn` module
class, and looks each one up in ember (the same dotted path with `torch` replaced by `ember`).
A torch name that ember lacks is "missing"; one that tools/not_provided.toml lists (ember
deliberately leaves it out) is "excused".

    python tools/api_coverage.py             the report: per module, then a summary
    python tools/api_coverage.py --missing   only the unexcused missing names, grouped by module
    python tools/api_coverage.py --markdown  the summary table for the README

Which names count as public: a module's `__all__` when it has one, else its dir() without
leading underscores; the top-level `torch` uses dir() (its `__all__` leaves out names programs
use, such as `torch.set_default_dtype` and `torch.channels_last`). Submodules, typing helpers
and other objects that a torch module merely imports from the standard library are not API.
"""
import argparse
import fnmatch
import importlib
import importlib.util
import inspect
import os
import pkgutil
import sys
import types
import typing
import warnings
from dataclasses import dataclass, field

try:
    import tomllib
except ModuleNotFoundError:             # Python 3.10
    import tomli as tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
NOT_PROVIDED_PATH = os.path.join(HERE, "not_provided.toml")

# the torch modules walked, besides the top level and torch.nn.modules.* (added from the files)
SCOPE = """
torch.nn torch.nn.functional torch.nn.init torch.nn.utils torch.nn.utils.rnn
torch.nn.utils.parametrize torch.nn.utils.parametrizations torch.nn.utils.prune
torch.nn.utils.stateless torch.nn.utils.clip_grad torch.nn.parallel
torch.optim torch.optim.lr_scheduler torch.optim.swa_utils
torch.autograd torch.autograd.functional torch.autograd.forward_ad torch.autograd.graph
torch.autograd.function torch.autograd.grad_mode torch.autograd.profiler
torch.autograd.anomaly_mode
torch.utils torch.utils.data torch.utils.data.dataloader torch.utils.data.dataset
torch.utils.data.sampler torch.utils.data.distributed torch.utils.checkpoint torch.utils.hooks
torch.linalg torch.fft torch.special
torch.distributions torch.distributions.constraints torch.distributions.transforms
torch.distributions.kl
torch.func torch.random torch.cuda torch.cuda.amp torch.amp
torch.backends torch.backends.cudnn torch.backends.mps torch.backends.mkldnn torch.backends.openmp
torch.onnx torch.hub torch.types torch.overrides torch.testing torch.jit torch.profiler
torch.multiprocessing torch.distributed torch.signal.windows torch.version torch.serialization
torch.sparse torch.masked torch.library
""".split()

# objects a torch module imports for its own use, not API: typing constructs and the
# standard-library modules these come from
_FOREIGN_MODULES = ("typing", "typing_extensions", "collections", "abc", "functools", "enum",
                    "dataclasses", "contextlib", "builtins", "warnings", "inspect", "itertools",
                    "numbers", "os", "sys", "math", "weakref", "threading", "logging", "pathlib",
                    "io", "copy", "types", "operator", "re", "json", "tempfile", "pickle")
_JUNK_NAMES = {"TYPE_CHECKING", "annotations"}


def torch_scope():
    """The module names walked: the top level, SCOPE, and each file of torch.nn.modules."""
    import torch.nn.modules
    files = sorted(m.name for m in pkgutil.iter_modules(torch.nn.modules.__path__)
                   if not m.name.startswith("_"))
    # torch.utils.tensorboard needs the optional tensorboard package, in torch as in ember
    optional = ["torch.utils.tensorboard"] if importlib.util.find_spec("tensorboard") else []
    return ["torch"] + SCOPE + optional + [f"torch.nn.modules.{f}" for f in files]


def _is_junk(name, obj):
    if name in _JUNK_NAMES or isinstance(obj, types.ModuleType):
        return True
    if isinstance(obj, type) and issubclass(obj, types.ModuleType):    # torch's PropModule
        return True
    if isinstance(obj, (typing.TypeVar, typing.ParamSpec)):
        return True
    if type(obj).__module__ in ("typing", "typing_extensions"):      # Optional[...], Any, ...
        return True
    if callable(obj):                   # a class or function a torch module imported from stdlib
        owner = getattr(obj, "__module__", None) or ""
        return owner.split(".")[0] in _FOREIGN_MODULES
    return False


def _module_names(mod, use_all):
    names = getattr(mod, "__all__", None) if use_all else None
    if names is not None:           # (torch.utils.data lists _DatasetKind: not public)
        return [n for n in names if not n.startswith("_")]
    names = [n for n in dir(mod) if not n.startswith("_")]
    wrapped = getattr(mod, "m", None)
    if type(mod) is not types.ModuleType and isinstance(wrapped, types.ModuleType):
        # torch.backends.cudnn and .mkldnn are module objects of their own class wrapping the
        # real module (as `m`), so that flags like `cudnn.benchmark` can be properties
        names = [n for n in dir(wrapped) if not n.startswith("_")]
        names += [n for n in vars(type(mod)) if not n.startswith("_")]
    return names


def public_names(mod, use_all=True):
    import torch
    out = []
    with warnings.catch_warnings():     # reading deprecated aliases warns
        warnings.simplefilter("ignore")
        for n in _module_names(mod, use_all):
            try:
                obj = getattr(mod, n)
            except AttributeError:      # listed in __all__ but lazily absent
                continue
            if mod is not torch and obj is torch.Tensor:    # a re-export, as in torch.fft
                continue
            if not _is_junk(n, obj):
                out.append(n)
    return sorted(set(out))


def ember_path(torch_path):
    return "ember" + torch_path[len("torch"):]


def _import(path):
    """The module, or the exception importing it raised."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return importlib.import_module(path)
        except Exception as e:          # noqa: BLE001 - any failure means "not importable"
            return e


def _has(obj, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            getattr(obj, name)
            return True
        except Exception:               # noqa: BLE001 - a property that raises still exists
            return name in dir(obj)


# ---- the not-provided list -------------------------------------------------------------------

@dataclass
class Excuse:
    group: str
    reason: str
    patterns: list


def load_not_provided(path=NOT_PROVIDED_PATH):
    with open(path, "rb") as f:
        data = tomllib.load(f)
    return [Excuse(g, v["reason"], list(v["names"])) for g, v in data.items()]


def excuse_for(qualname, excuses):
    """The group that excuses `qualname` (a dotted torch name), or None."""
    for ex in excuses:
        for pat in ex.patterns:
            if fnmatch.fnmatchcase(qualname, pat):
                return ex.group
    return None


def all_torch_names(reports):
    return [f"{r.name}.{n}" for r in reports for n in r.names]


def dead_patterns(reports, excuses):
    """Patterns in the not-provided list that match no torch name in scope (typos, or names
    torch has since dropped)."""
    names = all_torch_names(reports)
    return [(ex.group, pat) for ex in excuses for pat in ex.patterns
            if not any(fnmatch.fnmatchcase(q, pat) for q in names)]


def needless_excuses(reports, excuses):
    """Torch names ember provides although the not-provided list excuses them."""
    return [q for r in reports for n in r.names
            if (q := f"{r.name}.{n}") not in r.missing and excuse_for(q, excuses)]


# ---- the walk --------------------------------------------------------------------------------

@dataclass
class ModuleReport:
    name: str                   # the torch module, or "torch.Tensor"
    importable: bool
    error: str = ""
    names: list = field(default_factory=list)
    missing: list = field(default_factory=list)      # qualified torch names ember lacks
    excused: dict = field(default_factory=dict)      # qualified name -> group

    @property
    def present(self):
        return len(self.names) - len(self.missing)

    @property
    def unexcused(self):
        return [q for q in self.missing if q not in self.excused]


def walk_module(path, excuses):
    tmod = importlib.import_module(path)
    names = public_names(tmod, use_all=(path != "torch"))
    emod = _import(ember_path(path))
    importable = not isinstance(emod, Exception)
    rep = ModuleReport(path, importable, "" if importable else f"{type(emod).__name__}: {emod}",
                       names)
    rep.missing = [f"{path}.{n}" for n in names if not (importable and _has(emod, n))]
    rep.excused = {q: g for q in rep.missing if (g := excuse_for(q, excuses))}
    return rep


def walk_tensor(excuses):
    import torch
    import ember
    names = sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))
    rep = ModuleReport("torch.Tensor", True, "", names)
    rep.missing = [f"torch.Tensor.{n}" for n in names if not _has(ember.Tensor, n)]
    rep.excused = {q: g for q in rep.missing if (g := excuse_for(q, excuses))}
    return rep


def _signature(cls):
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return None
    return [(p.name, p.kind, p.default) for p in sig.parameters.values()]


def _same_default(a, b):
    if a is inspect.Parameter.empty or b is inspect.Parameter.empty:
        return a is b
    if callable(a) and callable(b):     # a function default, such as F.relu: the same name
        return getattr(a, "__name__", a) == getattr(b, "__name__", b)
    try:
        if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
            return True                 # both NaN
        return type(a) is type(b) and a == b or repr(a) == repr(b)
    except Exception:                   # noqa: BLE001 - incomparable defaults differ
        return False


def nn_signature_mismatches():
    """[(class name, [differences])] for torch.nn module classes ember has whose constructor
    parameters (names, order, kinds, defaults) differ from torch's."""
    import torch.nn
    import ember.nn
    out = []
    for name in public_names(torch.nn, use_all=False):
        tcls = getattr(torch.nn, name)
        if not (inspect.isclass(tcls) and issubclass(tcls, torch.nn.Module)):
            continue
        ecls = getattr(ember.nn, name, None)
        if ecls is None:
            continue
        ts, es = _signature(tcls), _signature(ecls)
        if ts is None or es is None:
            continue
        diffs = []
        tnames, enames = [p[0] for p in ts], [p[0] for p in es]
        if tnames != enames:
            gone = [n for n in tnames if n not in enames]
            extra = [n for n in enames if n not in tnames]
            if gone:
                diffs.append(f"missing parameters {gone}")
            if extra:
                diffs.append(f"extra parameters {extra}")
            if not gone and not extra:
                diffs.append(f"order {enames} (torch: {tnames})")
        edict = {p[0]: p for p in es}
        for n, kind, default in ts:
            if n not in edict:
                continue
            _, ekind, edefault = edict[n]
            if kind != ekind:
                diffs.append(f"{n}: kind {ekind.name} (torch: {kind.name})")
            if not _same_default(default, edefault):
                diffs.append(f"{n}: default {edefault!r} (torch: {default!r})")
        if diffs:
            out.append((name, diffs))
    return out


def walk(excuses=None):
    if excuses is None:
        excuses = load_not_provided()
    reports = [walk_module(p, excuses) for p in torch_scope()]
    reports.append(walk_tensor(excuses))
    return reports


# ---- output ----------------------------------------------------------------------------------

def totals(reports):
    total = sum(len(r.names) for r in reports)
    present = sum(r.present for r in reports)
    excused = sum(len(r.excused) for r in reports)
    return total, present, excused


def _pct(a, b):
    return f"{100.0 * a / b:.1f}%" if b else "-"


def print_report(reports, mismatches, out=sys.stdout):
    w = out.write
    for r in reports:
        flag = "" if r.importable else f"  NOT IMPORTABLE ({r.error})"
        w(f"{r.name}: {r.present}/{len(r.names)} ({_pct(r.present, len(r.names))}), "
          f"{len(r.excused)} excused{flag}\n")
        if r.unexcused:
            short = [q[len(r.name) + 1:] for q in r.unexcused]
            w("    missing: " + ", ".join(short) + "\n")
    w("\nnn module constructors that differ from torch's:\n")
    for name, diffs in mismatches:
        w(f"    {name}: " + "; ".join(diffs) + "\n")
    total, present, excused = totals(reports)
    unexcused = total - present - excused
    not_imp = [r.name for r in reports if not r.importable]
    w(f"\nsummary: {present}/{total} names present ({_pct(present, total)}); "
      f"{excused} deliberately not provided; {unexcused} missing; "
      f"present or excused {_pct(present + excused, total)}\n")
    w(f"modules importable: {len(reports) - len(not_imp)}/{len(reports)}"
      + (f" (not: {', '.join(not_imp)})" if not_imp else "") + "\n")
    w(f"nn module constructors differing from torch: {len(mismatches)}\n")


def print_missing(reports, out=sys.stdout):
    for r in reports:
        if r.unexcused:
            out.write(f"{r.name} ({len(r.unexcused)}): "
                      + ", ".join(q[len(r.name) + 1:] for q in r.unexcused) + "\n")


def print_markdown(reports, mismatches, out=sys.stdout):
    w = out.write
    w("| torch module | importable | names | in ember | not provided | missing |\n")
    w("|---|---|---|---|---|---|\n")
    for r in reports:
        w(f"| `{r.name}` | {'yes' if r.importable else 'no'} | {len(r.names)} | "
          f"{r.present} ({_pct(r.present, len(r.names))}) | {len(r.excused)} | "
          f"{len(r.unexcused)} |\n")
    total, present, excused = totals(reports)
    w(f"| **all** | {sum(r.importable for r in reports)}/{len(reports)} | {total} | "
      f"{present} ({_pct(present, total)}) | {excused} | {total - present - excused} |\n")
    w(f"\n`torch.nn` module constructors whose parameters differ from torch's: "
      f"{len(mismatches)}\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", action="store_true", help="print the README table")
    ap.add_argument("--missing", action="store_true",
                    help="print only the unexcused missing names, grouped by module")
    args = ap.parse_args(argv)
    reports = walk()
    if args.missing:
        print_missing(reports)
        return 0
    mismatches = nn_signature_mismatches()
    if args.markdown:
        print_markdown(reports, mismatches)
    else:
        print_report(reports, mismatches)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(HERE))      # run from anywhere: ember is the repo's
    sys.exit(main())
