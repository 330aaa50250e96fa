"""ember.fft: the discrete Fourier transforms PyTorch groups under torch.fft."""
from .ops.fft import (fft, ifft, rfft, irfft, hfft, ihfft, fft2, ifft2, rfft2, irfft2, fftn, ifftn,
                      rfftn, irfftn, hfft2, ihfft2, hfftn, ihfftn, fftfreq, rfftfreq, fftshift,
                      ifftshift)

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfft2", "ihfft2",
           "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
