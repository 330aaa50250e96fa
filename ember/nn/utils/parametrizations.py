"""Ready-made parametrizations (torch.nn.utils.parametrizations): weight_norm and
spectral_norm, registered through `parametrize.register_parametrization`."""
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...ops import blas as L
from ...ops import norms as R
from ...ops.complex import vdot
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize
from .orthogonal import orthogonal  # noqa: F401  (its own file: the three maps and their inverse)

__all__ = ["orthogonal", "weight_norm", "spectral_norm"]


def norm_except_dim(v, pow=2, dim=0):
    """The `pow`-norm of v over every dimension but `dim`, shaped to broadcast against v
    (dim=-1: over all of v, a 0-dim tensor; another negative dim counts from the end)."""
    if dim == -1:
        return R.vector_norm(v, pow)
    dim %= v.dim()
    others = tuple(d for d in range(v.dim()) if d != dim)
    return R.vector_norm(v, pow, others, True)


def weight_norm_value(v, g, dim=0):
    """The weight of weight normalisation: v scaled to the magnitude g (along `dim`)."""
    return v * (g / norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_norm_value(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Make `module.<name>` = g * v / ||v||, with the magnitude g and the direction v kept as
    `parametrizations.<name>.original0` and `original1`. A state_dict of the older
    nn.utils.weight_norm (`<name>_g`, `<name>_v`) loads into it."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def rename_old_keys(state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            g, v = state_dict.pop(g_key), state_dict.pop(v_key)
            state_dict[f"{prefix}parametrizations.{name}.original0"] = g
            state_dict[f"{prefix}parametrizations.{name}.original1"] = v

    module._register_load_state_dict_pre_hook(rename_old_keys)
    return module


def _as_matrix(weight, dim):
    """The weight as a matrix whose rows run along `dim` (the output dimension)."""
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.dim()) if d != dim))
    return weight.flatten(1)


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = _as_matrix(weight, self.dim)
            h, w = weight_mat.shape
            # random unit vectors, brought close to the singular vectors by 15 iterations
            self.register_buffer("_u", F.normalize(weight_mat.new_empty(h).normal_(0, 1),
                                                   dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(weight_mat.new_empty(w).normal_(0, 1),
                                                   dim=0, eps=eps))
            self._power_method(weight_mat, 15)

    def _power_method(self, weight_mat, n_power_iterations):
        """Power iterations on the estimates of the leading singular vectors, in place."""
        with grad_mode.no_grad():
            for _ in range(n_power_iterations):
                F.normalize(L.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
                F.normalize(L.mv(weight_mat.H, self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = _as_matrix(weight, self.dim)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # sigma, the largest singular value, as u^H W v (u and v held fixed)
        sigma = vdot(self._u.clone(), L.mv(weight_mat, self._v.clone()))
        return weight / sigma

    def right_inverse(self, value):
        return value


def _output_dim(module, dim):
    """The default dimension of a weight's outputs: 1 for transposed convolutions."""
    if dim is not None:
        return dim
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Make `module.<name>` = W / sigma(W), sigma the largest singular value estimated by
    power iterations (one more each access in training mode; none in eval mode)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, _output_dim(module, dim), eps))
    return module
