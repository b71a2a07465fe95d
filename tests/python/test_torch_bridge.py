"""nanocuda.torch_bridge without a GPU: nothing happens at import, the first-sight hook
ignores other types, and without torch the bridge says why it cannot be built."""

import importlib.util

import numpy as np
import pytest

import nanocuda
from nanocuda import torch_bridge
from testing_hooks import hooks

HAVE_TORCH = importlib.util.find_spec("torch") is not None


def test_hook_ignores_types_that_are_not_torch():
    assert torch_bridge._autoload(np.ndarray) is None
    assert hooks.read_tensor(np.zeros(3)) is None  # no exchange API: no reader
    assert not nanocuda._nanocuda._internal.tensor_reader_is_replaced(np.ndarray)


@pytest.mark.skipif(HAVE_TORCH, reason="checks the error when torch is absent")
def test_enable_without_torch_says_so():
    with pytest.raises(ImportError, match="needs PyTorch"):
        torch_bridge.enable()
    assert not torch_bridge.is_enabled()
