"""`Tensor.untyped_storage()`: the memory a tensor and its views share, as bytes.

ember keeps no storage object of its own: a tensor's memory is its base tensor's array (a
view's `_base`), so the storage is described from that array.
"""


class StorageBase:
    """The base class of storages (torch._C.StorageBase): UntypedStorage is one."""
    __slots__ = ()


class UntypedStorage(StorageBase):
    __slots__ = ("_owner",)

    def __init__(self, owner):
        self._owner = owner         # the base tensor whose array is the whole storage

    @classmethod
    def _of(cls, tensor):
        return cls(tensor._storage_root())

    def data_ptr(self):
        return self._owner._data_ptr()

    def nbytes(self):
        return self._owner._data.nbytes

    def size(self):
        return self.nbytes()

    __len__ = size

    def element_size(self):
        return 1

    def is_shared(self):
        return self._owner.is_shared()

    def share_memory_(self):
        self._owner.share_memory_()
        return self

    @property
    def device(self):
        return self._owner._device

    def __eq__(self, other):
        # two tensors share memory exactly when their storages start at the same address
        return isinstance(other, UntypedStorage) and self.data_ptr() == other.data_ptr() \
            and self.nbytes() == other.nbytes()

    def __hash__(self):
        return hash((self.data_ptr(), self.nbytes()))
