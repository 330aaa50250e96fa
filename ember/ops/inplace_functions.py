"""torch.<name>_ functions (torch.abs_(x), ...): each calls the tensor's in-place method."""



def _inplace_function(name):
    """torch.<name>(input, ...): the in-place method input.<name>(...)."""
    def function(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    function.__name__ = name
    return function


_INPLACE_FUNCTIONS = [
    "abs_", "acos_", "acosh_", "asin_", "asinh_", "atan_", "atanh_", "arccos_", "arccosh_",
    "arcsin_", "arcsinh_", "arctan_", "arctanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_",
    "clip_", "cos_", "cosh_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_",
    "frac_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_",
    "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinh_", "sqrt_", "square_", "tan_",
    "tanh_", "trunc_", "zero_", "detach_", "resize_as_"]
globals().update({name: _inplace_function(name) for name in _INPLACE_FUNCTIONS})


# ----------------------------------------------------------------------------- in-place forms
def _inplace_functions():
    return {name: _inplace_function(name) for name in ("addmv_", "as_strided_", "index_put_")}


globals().update(_inplace_functions())


__all__ = ['addmv_', 'as_strided_', 'index_put_', 'abs_', 'acos_', 'acosh_', 'asin_', 'asinh_',
               'atan_', 'atanh_', 'arccos_', 'arccosh_', 'arcsin_', 'arcsinh_', 'arctan_',
               'arctanh_', 'ceil_', 'clamp_', 'clamp_max_', 'clamp_min_', 'clip_', 'cos_', 'cosh_',
               'erf_', 'erfc_', 'exp2_', 'exp_', 'expm1_', 'fix_', 'floor_', 'frac_', 'log10_',
               'log1p_', 'log2_', 'log_', 'logit_', 'nan_to_num_', 'neg_', 'negative_',
               'reciprocal_', 'round_', 'rsqrt_', 'sigmoid_', 'sin_', 'sinh_', 'sqrt_', 'square_',
               'tan_', 'tanh_', 'trunc_', 'zero_', 'detach_', 'resize_as_']
