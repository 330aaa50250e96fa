"""torch.nn.modules.linear_cross_entropy: in torch, the chunked kernels behind
F.linear_cross_entropy; it exports no public names. ember computes F.linear_cross_entropy in
ember/nn/functional/loss.py (options in linear_cross_entropy_options.py)."""
__all__ = []
