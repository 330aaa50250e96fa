"""ember.nn: Parameter, Module and the layers, functional, init."""
from .parameter import Parameter, Buffer
from .modules import *  # noqa: F401,F403
from .modules import Module
from . import init
