"""ember.xpu: Intel's GPU backend, which ember does not have: torch's answers on a machine
without it (not available, no devices; what needs a device raises torch's AssertionError)."""


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    return False


def memory_allocated(device=None):
    return 0


def manual_seed(seed):
    """Accepted and ignored, as torch does without the backend (so are the others below)."""


def manual_seed_all(seed):
    pass


def seed():
    pass


def seed_all():
    pass


def empty_cache():
    pass


def _not_compiled(*args, **kwargs):
    raise AssertionError("Torch not compiled with XPU enabled")


synchronize = current_device = get_device_name = get_device_properties = set_device = \
    _not_compiled
