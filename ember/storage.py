"""torch.storage's names: the storage classes and the switches of the typed-storage warning."""
from ._storage import UntypedStorage  # noqa: F401
from ._typed_storage import (  # noqa: F401
    TypedStorage, _get_always_warn_typed_storage_removal, _reset_warn_typed_storage_removal,
    _set_always_warn_typed_storage_removal, _warn_typed_storage_removal)
