"""LazyModuleMixin: the machinery of the lazy modules (LazyLinear, LazyConv*, LazyBatchNorm*, ...).

A lazy module holds placeholders (UninitializedParameter / UninitializedBuffer, in
`ember.nn.parameter`) until its first forward, which infers the missing size (in_features,
in_channels, num_features) from the input, materializes the placeholders in place and turns the
module into its eager class (LazyLinear -> Linear, ...).
"""
from ...autograd import grad_mode
from ..parameter import is_lazy


class LazyModuleMixin:
    """A module whose placeholders are materialized by its first forward (a pre-hook), which
    then turns it into `cls_to_become`."""
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                                with_kwargs=True)

    def has_uninitialized_params(self):
        return any(is_lazy(t) for t in (*self._parameters.values(), *self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{self.__class__.__name__}")

    def _infer_parameters(self, module, args, kwargs=None):
        self.initialize_parameters(*args, **(kwargs or {}))
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        self._initialize_hook.remove()
        del self._initialize_hook
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # a checkpoint gives the placeholders their shapes
        for name, t in (*self._parameters.items(), *self._buffers.items()):
            value = state_dict.get(prefix + name)
            if is_lazy(t) and value is not None and not is_lazy(value):
                with grad_mode.no_grad():
                    t.materialize(value.shape)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)
