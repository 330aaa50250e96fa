"""F.scaled_mm: the product of two float8 matrices with their scales applied, for float8
training and inference: out = (mat_a @ mat_b) * scale_a * scale_b (+ bias), in output_dtype
(bfloat16 by default). TensorWise scaling takes one float32 scale per matrix, RowWise one per
row of mat_a ((M, 1)) and per column of mat_b ((1, N)). ember computes the product in float32
from the float8 values. The block-wise recipes and swizzles name torch's CUDA kernels' layouts:
they are refused here as torch's CPU kernel refuses them. F.scaled_grouped_mm has no CPU kernel
in torch: it raises torch's error.
"""
from enum import Enum

from ... import _dtype as D
from ..._printing import scalar_type_name

__all__ = ["ScalingType", "SwizzleType", "scaled_mm", "scaled_grouped_mm"]


class ScalingType(Enum):
    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class SwizzleType(Enum):
    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


ScalingType.__name__ = ScalingType.__qualname__ = "_ScalingType"
SwizzleType.__name__ = SwizzleType.__qualname__ = "_SwizzleType"


def _single(x):
    return x[0] if isinstance(x, (list, tuple)) and len(x) == 1 else x


def _fits(recipe, mat_a, mat_b, scale_a, scale_b):
    if mat_a.dtype not in D._FLOAT8 or mat_b.dtype not in D._FLOAT8:
        return False
    if scale_a.dtype is not D.float32 or scale_b.dtype is not D.float32:
        return False
    if recipe == (ScalingType.TensorWise, ScalingType.TensorWise):
        return scale_a.numel() == 1 and scale_b.numel() == 1
    if recipe == (ScalingType.RowWise, ScalingType.RowWise):
        return (tuple(scale_a.shape) == (mat_a.shape[0], 1)
                and tuple(scale_b.shape) == (1, mat_b.shape[1])
                and scale_a.is_contiguous() and scale_b.is_contiguous())
    return False


def _shape(t):
    return "[" + ", ".join(map(str, t.shape)) + "]"


def _stride(t):
    return "[" + ", ".join(map(str, t.stride())) + "]"


def scaled_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None,
              swizzle_b=None, bias=None, output_dtype=D.bfloat16, contraction_dim=(),
              use_fast_accum=False):
    scale_a, scale_b = _single(scale_a), _single(scale_b)
    recipe = (_single(scale_recipe_a), _single(scale_recipe_b))
    if recipe == (ScalingType.RowWise, ScalingType.RowWise):
        for name, scale, size in (("scale_a", scale_a, mat_a.shape[0]),
                                  ("scale_b", scale_b, mat_b.shape[-1])):
            if scale.numel() != size:
                raise ValueError(f"{name} must have {size} Float elements, got "
                                 f"{scale.numel()}")
    if not _fits(recipe, mat_a, mat_b, scale_a, scale_b):
        m, n = mat_a.shape[0], mat_b.shape[-1]
        raise ValueError(
            f"Invalid scaling configuration.\n- For TensorWise scaling, a and b should be "
            f"float8, scales should be float and singletons.\n- For RowWise scaling, a and b "
            f"should be float8, scales should be float, scale_a should be ({m}, 1) and scale_b "
            f"should be (1, {n}), and both should be contiguous.\nGot mat_a.dtype()="
            f"{scalar_type_name(mat_a.dtype)}, scale_a.dtype()={scalar_type_name(scale_a.dtype)}"
            f", scale_a.size()={_shape(scale_a)}, scale_a.stride()={_stride(scale_a)}, "
            f"mat_b.dtype()={scalar_type_name(mat_b.dtype)}, scale_b.dtype()="
            f"{scalar_type_name(scale_b.dtype)}, scale_b.size()={_shape(scale_b)} and "
            f"scale_b.stride()={_stride(scale_b)}")
    out = mat_a.float().matmul(mat_b.float())
    out = out * scale_a.reshape(scale_a.shape if scale_a.numel() > 1 else ()) \
        * scale_b.reshape(scale_b.shape if scale_b.numel() > 1 else ())
    if bias is not None:
        out = out + bias.float()
    return out.to(output_dtype or D.bfloat16)


def scaled_grouped_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b,
                      swizzle_a=None, swizzle_b=None, bias=None, offs=None,
                      output_dtype=D.bfloat16, contraction_dim=(), use_fast_accum=False):
    raise NotImplementedError("Could not run 'aten::_scaled_grouped_mm_v2' with arguments from "
                              "the 'CPU' backend.")
