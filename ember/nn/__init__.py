"""ember.nn: Parameter, Module and the layers, functional, init, utils."""
from .parameter import Parameter, Buffer
from .modules import *  # noqa: F401,F403
from . import functional, init, utils
from . import grad
from .parallel import DataParallel  # noqa: F401  (torch.nn.DataParallel)
