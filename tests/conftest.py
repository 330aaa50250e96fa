"""Shared pytest setup.

In CI (the CI environment variable is set) hypothesis runs derandomized: the same examples on
every run, so a submission's result does not depend on the luck of the draw. Local runs keep
exploring new examples (and remember failing ones in .hypothesis/).
"""
import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
