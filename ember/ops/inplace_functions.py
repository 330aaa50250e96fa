"""torch.<name>_ functions (torch.abs_(x), ...): each calls the tensor's in-place method."""


def _inplace_function(name):
    """torch.<name>(input, ...): the in-place method input.<name>(...)."""
    def function(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    function.__name__ = name
    return function


# one module-level name each, so `from ember.ops.inplace_functions import abs_` is plain to read
addmv_ = _inplace_function("addmv_")
as_strided_ = _inplace_function("as_strided_")
index_put_ = _inplace_function("index_put_")
abs_ = _inplace_function("abs_")
acos_ = _inplace_function("acos_")
acosh_ = _inplace_function("acosh_")
asin_ = _inplace_function("asin_")
asinh_ = _inplace_function("asinh_")
atan_ = _inplace_function("atan_")
atanh_ = _inplace_function("atanh_")
arccos_ = _inplace_function("arccos_")
arccosh_ = _inplace_function("arccosh_")
arcsin_ = _inplace_function("arcsin_")
arcsinh_ = _inplace_function("arcsinh_")
arctan_ = _inplace_function("arctan_")
arctanh_ = _inplace_function("arctanh_")
ceil_ = _inplace_function("ceil_")
clamp_ = _inplace_function("clamp_")
clamp_max_ = _inplace_function("clamp_max_")
clamp_min_ = _inplace_function("clamp_min_")
clip_ = _inplace_function("clip_")
cos_ = _inplace_function("cos_")
cosh_ = _inplace_function("cosh_")
erf_ = _inplace_function("erf_")
erfc_ = _inplace_function("erfc_")
exp2_ = _inplace_function("exp2_")
exp_ = _inplace_function("exp_")
expm1_ = _inplace_function("expm1_")
fix_ = _inplace_function("fix_")
floor_ = _inplace_function("floor_")
frac_ = _inplace_function("frac_")
log10_ = _inplace_function("log10_")
log1p_ = _inplace_function("log1p_")
log2_ = _inplace_function("log2_")
log_ = _inplace_function("log_")
logit_ = _inplace_function("logit_")
nan_to_num_ = _inplace_function("nan_to_num_")
neg_ = _inplace_function("neg_")
negative_ = _inplace_function("negative_")
reciprocal_ = _inplace_function("reciprocal_")
round_ = _inplace_function("round_")
rsqrt_ = _inplace_function("rsqrt_")
sigmoid_ = _inplace_function("sigmoid_")
sin_ = _inplace_function("sin_")
sinh_ = _inplace_function("sinh_")
sqrt_ = _inplace_function("sqrt_")
square_ = _inplace_function("square_")
tan_ = _inplace_function("tan_")
tanh_ = _inplace_function("tanh_")
trunc_ = _inplace_function("trunc_")
zero_ = _inplace_function("zero_")
detach_ = _inplace_function("detach_")
resize_as_ = _inplace_function("resize_as_")


__all__ = ['addmv_', 'as_strided_', 'index_put_', 'abs_', 'acos_', 'acosh_', 'asin_', 'asinh_',
               'atan_', 'atanh_', 'arccos_', 'arccosh_', 'arcsin_', 'arcsinh_', 'arctan_',
               'arctanh_', 'ceil_', 'clamp_', 'clamp_max_', 'clamp_min_', 'clip_', 'cos_', 'cosh_',
               'erf_', 'erfc_', 'exp2_', 'exp_', 'expm1_', 'fix_', 'floor_', 'frac_', 'log10_',
               'log1p_', 'log2_', 'log_', 'logit_', 'nan_to_num_', 'neg_', 'negative_',
               'reciprocal_', 'round_', 'rsqrt_', 'sigmoid_', 'sin_', 'sinh_', 'sqrt_', 'square_',
               'tan_', 'tanh_', 'trunc_', 'zero_', 'detach_', 'resize_as_']
