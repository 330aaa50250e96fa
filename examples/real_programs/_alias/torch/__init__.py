"""`import torch` in a child process of a program run under the ember backend.

multiprocessing's spawn starts a fresh interpreter with the parent's sys.path, on which the
harness put this folder (only for the ember backend): the child's first `import torch` runs
this file, which installs the harness's alias, so that the child sees ember as its parent does.
The import system then takes the module that sys.modules holds under "torch": ember.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from _harness import use_backend  # noqa: E402

use_backend("ember")
