"""Shared pytest setup.

In CI (the CI environment variable is set) hypothesis runs derandomized: the same examples on
every run, so a submission's result does not depend on the luck of the draw. Local runs keep
exploring new examples (and remember failing ones in .hypothesis/).
"""
import os

import pytest
import torch
from hypothesis import settings

import ember

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _typed_storage_warning_fresh():
    """torch and ember both warn of typed storages once per process: each test starts with
    neither warned, so that a test's warnings do not depend on which tests ran before it."""
    torch.storage._reset_warn_typed_storage_removal()
    ember.storage._reset_warn_typed_storage_removal()
