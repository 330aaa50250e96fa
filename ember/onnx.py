"""ember.onnx: importable so that programs which mention torch.onnx load; exporting raises.

ONNX export needs a traced graph of the model (torch.export's or TorchScript's); ember runs
eagerly and records no such graph, so export() raises OnnxExporterError naming what is missing.
"""

__all__ = ["export", "is_in_onnx_export", "OnnxExporterError", "ONNXProgram", "ExportableModule",
           "InputObserver"]


class OnnxExporterError(RuntimeError):
    """Raised when a model cannot be exported to ONNX."""


def _unsupported(what):
    return OnnxExporterError(
        f"{what} is not supported by ember: ONNX export needs a traced graph of the model "
        "(torch.export or TorchScript), and ember runs eagerly without one. Export the model "
        "with PyTorch instead.")


def is_in_onnx_export():
    """Always False: no export is ever in progress in ember."""
    return False


def export(model, args=(), f=None, *, kwargs=None, **options):
    raise _unsupported("torch.onnx.export")


class ONNXProgram:
    """The result of a successful torch.onnx.export; ember never produces one."""

    def __init__(self, *args, **kwargs):
        raise _unsupported("torch.onnx.ONNXProgram")


class ExportableModule:
    """A module wrapper torch.onnx uses to export with extra inputs; unsupported in ember."""

    def __init__(self, *args, **kwargs):
        raise _unsupported("torch.onnx.ExportableModule")


class InputObserver:
    """torch.onnx's recorder of example inputs for export; unsupported in ember."""

    def __init__(self, *args, **kwargs):
        raise _unsupported("torch.onnx.InputObserver")
