"""The per-operation fp32 precision settings of a backend (`cudnn.conv.fp32_precision`, ...)."""


class FP32Precision:
    """One operation family's fp32 precision: "tf32" for cuDNN conv/rnn by default, "none"
    for oneDNN's."""

    def __init__(self, fp32_precision):
        self.fp32_precision = fp32_precision

    def __repr__(self):
        return f"FP32Precision(fp32_precision={self.fp32_precision!r})"
