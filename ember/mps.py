"""ember.mps: Apple's Metal backend, which ember does not have: torch's answers on a machine
without it (not available, no devices; what needs the backend raises torch's RuntimeError)."""


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """Accepted and ignored, as torch does without the backend."""


def _needs_backend(what):
    def call(*args, **kwargs):
        raise RuntimeError(f"Cannot execute {what}() without MPS backend.")
    return call


synchronize = _needs_backend("deviceSynchronize")
seed = get_rng_state = _needs_backend("getDefaultGenerator")
empty_cache = _needs_backend("emptyCache")
current_allocated_memory = _needs_backend("getCurrentAllocatedMemory")
driver_allocated_memory = _needs_backend("getDriverAllocatedMemory")
recommended_max_memory = _needs_backend("getRecommendedMaxMemory")
