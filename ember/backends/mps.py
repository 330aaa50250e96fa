"""ember.backends.mps: Apple's Metal backend, absent (as in torch on Linux)."""

__all__ = ["get_core_count", "get_name", "is_built", "is_available", "is_macos13_or_newer",
           "is_macos_or_newer"]


def is_built():
    return False


def is_available():
    return False


def is_macos_or_newer(major, minor):
    raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")


def is_macos13_or_newer(minor=0):
    return is_macos_or_newer(13, minor)


def get_name():
    raise RuntimeError("MPS backend is not available: there is no Metal device to name")


def get_core_count():
    raise RuntimeError("MPS backend is not available: there is no Metal device to count "
                       "the cores of")
