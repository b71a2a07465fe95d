"""The raw fast paths of Graph.update, resource allocate and Buffer.close, and the torch-op
checks moved into Launchers, without a GPU: their entry points, argument errors, and the
generated op code (GPU behaviour: test_perf_paths_gpu.py)."""

import itertools

import pytest

import nanocuda

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs PyTorch (not installed)")
_count = itertools.count()


@pytest.mark.parametrize("cls, name", [
    (nanocuda.Graph, "update"), (nanocuda.Buffer, "close"), (nanocuda.Device, "allocate"),
    (nanocuda.DeviceMemoryResource, "allocate"), (nanocuda.PinnedMemoryResource, "allocate"),
    (nanocuda.ManagedMemoryResource, "allocate"), (nanocuda.VirtualMemoryResource, "allocate")])
def test_fast_paths_are_raw_methods_with_signatures(cls, name):
    method = cls.__dict__[name]
    assert type(method).__name__ == "method_descriptor"
    assert method.__text_signature__ and method.__doc__


def test_python_memory_resources_keep_the_overridable_allocate():
    # A Python subclass of MemoryResource must reach its own allocate through the trampoline.
    assert type(nanocuda.MemoryResource.__dict__["allocate"]).__name__ != "method_descriptor"


def test_graph_update_argument_errors_need_no_driver():
    g = nanocuda.Graph()
    with pytest.raises(TypeError, match="missing the node index"):
        g.update()
    with pytest.raises(TypeError, match="only keyword is target="):
        g.update(0, foo=1)
    with pytest.raises(ValueError, match="Graph.update: the graph is empty"):
        g.update(0, 1)
    with pytest.raises(ValueError, match="the graph is empty"):
        g.update(target=nanocuda.Graph())


def test_launcher_require_converts_its_arguments():
    from nanocuda import _nanocuda as ext

    with pytest.raises(TypeError, match="expected a nanocuda.Launcher"):
        ext._internal.launcher_require(object(), 0, [2 | 32 << 8 | 1 << 16], True)


def test_buffer_close_on_an_uninitialized_subclass_is_an_error():
    class Sub(nanocuda.Buffer):
        def __init__(self):  # does not call Buffer.__init__
            pass

    with pytest.raises(TypeError, match="not initialized"):
        Sub().close()
    with pytest.raises(TypeError, match="unexpected keyword argument 'strem'"):
        Sub().close(strem=None)


@needs_torch
def test_generated_call_leaves_launcher_checked_tensors_to_the_launcher(monkeypatch):
    from nanocuda import torch_ops
    from nanocuda.torch_ops import _op, _spec

    monkeypatch.setattr(_spec, "device_type", "cpu")

    def add_out(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        torch.add(a, b, out=out)

    op = torch_ops.op(f"nc_perf{next(_count)}::add_out", mutates_args=("out",), dtypes="float32")(add_out)
    src = type(op)._fast_source
    assert "a.is_contiguous()" in src and "a.dtype is not" in src
    if hasattr(torch._C, "_any_requires_grad"):
        assert "_any_rg(a, b, out)" in src and ".requires_grad" not in src
    # What KernelOp._learn_requires does once it knows where the tensors go:
    op._launch_checked = frozenset({"a", "b"})
    type(op).__bases__[0]._specialize(op)
    src = type(op)._fast_source
    assert "a.is_contiguous()" not in src and "b.dtype" not in src
    assert "out.is_contiguous()" in src and "out.dtype is not" in src
    a, b, out = torch.ones(4), torch.ones(4), torch.zeros(4)
    op(a, b, out)
    assert torch.equal(out, a + b)
    with pytest.raises(TypeError, match="compiled for torch.float32"):
        op(a, b, torch.zeros(4, dtype=torch.float64))
    codes = _op._dlpack_codes(torch)
    assert codes[torch.float32] == 2 | 32 << 8 | 1 << 16 and codes[torch.bfloat16] == 4 | 16 << 8 | 1 << 16
    assert torch.bool not in codes  # kept in Python: its DLPack code varies by version
