"""ember.version (torch.version) and ember.torch_version (torch.torch_version): the version
string as a TorchVersion, a str that compares with strings and tuples by version order."""
import re

_version_string = "0.1.0"      # ember's version (ember.__version__, as a TorchVersion)


def _parts(version):
    """A version ("2.1.0+cpu", (2, 1), "2.1a0") as a tuple of release numbers (local labels and
    pre-release tags left out) for ordering."""
    if isinstance(version, (tuple, list)):
        return tuple(int(v) for v in version)
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", str(version))
    if match is None:
        raise ValueError(f"Invalid version: '{version}'")
    return tuple(int(v) for v in match.group(1).split("."))


def _padded(a, b):
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)), b + (0,) * (n - len(b))


class TorchVersion(str):
    """A version string compared as a version: TorchVersion("2.10.0") > "2.9" is True."""

    def _cmp(self, other, op):
        try:
            a, b = _padded(_parts(self), _parts(other))
        except (ValueError, TypeError):
            return NotImplemented
        return op(a, b)

    def __gt__(self, other):
        return self._cmp(other, tuple.__gt__)

    def __ge__(self, other):
        return self._cmp(other, tuple.__ge__)

    def __lt__(self, other):
        return self._cmp(other, tuple.__lt__)

    def __le__(self, other):
        return self._cmp(other, tuple.__le__)

    def __eq__(self, other):
        result = self._cmp(other, tuple.__eq__)
        return str.__eq__(self, other) if result is NotImplemented else result

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__


__version__ = TorchVersion(_version_string)
internal_version = _version_string
cuda = None         # ember is not built against CUDA or ROCm
hip = None
rocm = None
xpu = None
debug = False
git_version = "Unknown"
