"""ember.hub: models and weights from a hub directory, without the network.

`load(dir, name, source="local")` imports `dir/hubconf.py` and calls its entry point;
`load(owner/repo[:ref], name)` does the same for a repository already in the hub cache
(get_dir()/owner_repo_ref, where torch.hub keeps its downloads). `load_state_dict_from_url`
returns the checkpoint cached in get_dir()/checkpoints, copying it there first when the URL is
a file:// one. Anything that would need a download raises a RuntimeError naming the URL:
ember does not reach the network.
"""
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import urllib.parse
import urllib.request
from .serialization import load as _load

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url",
           "set_dir"]

_hub_dir = [None]
_HASH_IN_NAME = re.compile(r"-([a-f0-9]*)\.")       # name-<sha256 prefix>.ext


def get_dir():
    """The hub directory: set_dir()'s, else $TORCH_HOME/hub, else ~/.cache/torch/hub (the one
    torch.hub uses, so checkpoints torch downloaded are found)."""
    if _hub_dir[0] is not None:
        return _hub_dir[0]
    home = os.environ.get("TORCH_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache")), "torch")
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d):
    _hub_dir[0] = os.path.expanduser(d)


def _no_network(url, dst):
    return RuntimeError(f"ember.hub cannot download {url!r}: ember does not use the network. "
                        f"Put the file at {dst!r} (or pass a file:// URL).")


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Copy a file:// URL to dst, checking that its SHA-256 starts with hash_prefix."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme != "file":
        raise _no_network(url, dst)
    src = urllib.request.url2pathname(parsed.path)
    tmp = dst + ".partial"
    shutil.copyfile(src, tmp)
    try:
        if hash_prefix is not None:
            with open(tmp, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", '
                                   f'got "{digest}")')
        os.replace(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """ember.load of the checkpoint at url, cached in model_dir (get_dir()/checkpoints)."""
    model_dir = model_dir or os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    name = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached = os.path.join(model_dir, name)
    if not os.path.exists(cached):
        sys.stderr.write(f'Downloading: "{url}" to {cached}\n')
        match = _HASH_IN_NAME.search(name) if check_hash else None
        download_url_to_file(url, cached, match.group(1) if match else None, progress=progress)
    return _load(cached, map_location=map_location, weights_only=weights_only)


def _cached_repo(github):
    """The hub-cache directory of "owner/repo[:ref]", or an error naming what to fetch."""
    repo, _, ref = github.partition(":")
    owner, _, name = repo.partition("/")
    refs = [ref] if ref else ["main", "master"]
    for r in refs:
        path = os.path.join(get_dir(), f"{owner}_{name}_{r.replace('/', '_')}")
        if os.path.isdir(path):
            return path
    url = f"https://github.com/{repo}" + (f"/tree/{ref}" if ref else "")
    raise _no_network(url, os.path.join(get_dir(), f"{owner}_{name}_{refs[0]}"))


def _hubconf(repo_dir):
    spec = importlib.util.spec_from_file_location("hubconf", os.path.join(repo_dir, "hubconf.py"))
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, repo_dir)        # hubconf imports its repository's own modules
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_dir)
    missing = [d for d in getattr(module, "dependencies", [])
               if importlib.util.find_spec(d) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return module


def _entry(module, model):
    fn = None if model.startswith("_") else getattr(module, model, None)
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Call the entry point `model` of a hubconf.py with args and kwargs."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        if force_reload:
            raise _no_network(f"https://github.com/{repo_or_dir.partition(':')[0]}",
                              get_dir())
        repo_or_dir = _cached_repo(repo_or_dir)
    return _entry(_hubconf(repo_or_dir), model)(*args, **kwargs)


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):  # noqa: A001
    """The entry points of a cached repository's hubconf.py."""
    module = _hubconf(_cached_repo(github))
    return [n for n in dir(module) if callable(getattr(module, n)) and not n.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):  # noqa: A001
    """The docstring of an entry point of a cached repository."""
    return _entry(_hubconf(_cached_repo(github)), model).__doc__
