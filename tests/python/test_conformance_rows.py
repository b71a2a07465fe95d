"""cuda.core 1.2 behaviours of issue 23's last rows, on the mock driver: a green context closed
after a launch left it current, get_kernel on relocatable objects, a ProgramOptions instance's
own as_bytes, and launch()'s foreign-stream warning."""

import pytest

import nanocuda
from mock_run import run_on_mock  # noqa: E402  (tests/python is on sys.path)

PRELUDE = """
    import warnings
    import nanocuda
    from nanocuda import ContextOptions, Device, SMResourceOptions

    d = Device(0)
    d.set_current()
    src = 'extern "C" __global__ void k(const float* a, float* b, float* c, int n) {}'
    k = nanocuda.compile(src, arch="sm_90a").get_kernel("k")
    cfg = nanocuda.LaunchConfig(grid=1, block=32)
"""


def test_green_context_closes_after_a_launch_left_it_current(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    groups, _ = d.resources.sm.split(SMResourceOptions(count=(16, 16)))
    a = d.create_context(ContextOptions(resources=[groups[0]]))
    b = d.create_context(ContextOptions(resources=[groups[1]]))
    for ctx in (a, b):  # each launch makes its stream's context current and leaves it so
        s = ctx.create_stream()
        nanocuda.launch(s, cfg, k, 0, 0, 0, 4)
    assert d.set_current(d.context) == b  # (set_current returns what it popped)
    # Made current by the user: close refuses, as cuda.core does.
    d.set_current(b)
    raises(lambda: b.close(), RuntimeError, "Context.close", "while it is current")
    d.set_current(d.context)
    nanocuda.launch(s, cfg, k, 0, 0, 0, 4)  # b current again, by a launch
    b.close()
    a.close()
    assert a.is_closed and b.is_closed
    current = d.set_current(d.context)
    assert current == d.context and not current.is_green  # the primary, current before the launches
    raises(lambda: b.create_stream(), RuntimeError, "closed")
    print("ok")
    """, version="13.0", NANOCUDA_MOCK_CTX_STACK="1")


def test_green_context_launch_after_user_context_restores_it(mock_libcuda):
    # The user had green context a current; a launch on b's stream switches to b; closing b
    # gives a back (not the primary).
    run_on_mock(mock_libcuda, PRELUDE + """
    groups, _ = d.resources.sm.split(SMResourceOptions(count=(16, 16)))
    a = d.create_context(ContextOptions(resources=[groups[0]]))
    b = d.create_context(ContextOptions(resources=[groups[1]]))
    s = b.create_stream()
    d.set_current(a)
    nanocuda.launch(s, cfg, k, 0, 0, 0, 4)
    b.close()
    assert d.set_current(d.context) == a
    a.close()
    print("ok")
    """, version="13.0", NANOCUDA_MOCK_CTX_STACK="1")


def test_a_closed_green_context_lives_while_its_stream_does(mock_libcuda):
    # close() with a stream still made on it: closed at once, destroyed when the stream goes;
    # a launch on that stream made it current, so the destroy leaves nothing current instead.
    run_on_mock(mock_libcuda, PRELUDE + """
    import gc
    groups, _ = d.resources.sm.split(SMResourceOptions(count=(16, 16)))
    ctx = d.create_context(ContextOptions(resources=[groups[0]]))
    s = ctx.create_stream()
    ctx.close()
    assert ctx.is_closed and s.context.is_closed
    raises(lambda: ctx.create_stream(), RuntimeError, "closed")
    nanocuda.launch(s, cfg, k, 0, 0, 0, 4)  # the stream still works, and leaves ctx current
    assert d.set_current(d.context) == ctx  # (the primary now)
    nanocuda.launch(s, cfg, k, 0, 0, 0, 4)  # ctx current again
    del s, ctx
    gc.collect()
    assert d.set_current(d.context) is None  # the destroyed context was not left current
    print("ok")
    """, version="13.0", NANOCUDA_MOCK_CTX_STACK="1")


@pytest.mark.parametrize("kind", ["object", "library"])
def test_get_kernel_refuses_relocatable_code(kind):
    code = getattr(nanocuda.ObjectCode, f"from_{kind}")(b"\x7fELF not loaded")
    assert code.code_type == kind
    with pytest.raises(RuntimeError, match=f'Unsupported code type "{kind}".*link {kind} code with a Linker'):
        code.get_kernel("saxpy<float>")


def test_program_options_instance_may_replace_as_bytes():
    from nanocuda.utils import make_program_cache_key

    opts = nanocuda.ProgramOptions(arch="sm_90")
    key = make_program_cache_key(code="a", code_type="c++", options=opts, target_type="cubin")

    def boom(*args, **kwargs):
        raise TypeError("boom")

    opts.as_bytes = boom  # shadows the method on this instance only
    with pytest.raises(TypeError, match="boom"):
        make_program_cache_key(code="a", code_type="c++", options=opts, target_type="cubin")
    assert nanocuda.ProgramOptions(arch="sm_90").as_bytes("nvrtc", "cubin")
    del opts.as_bytes
    assert make_program_cache_key(code="a", code_type="c++", options=opts, target_type="cubin") == key
    # Fields still set (and checked) as before; nothing else becomes a silent attribute.
    opts.std = "c++20"
    assert opts.std == "c++20" and b"-std=c++20" in opts.as_bytes("nvrtc", "cubin")
    with pytest.raises(AttributeError, match=r"no attribute 'ftz' to set; pass it when constructing"):
        opts.ftz = True
    with pytest.raises(AttributeError, match="no attribute 'fast_mth' to set"):
        opts.fast_mth = True
    with pytest.raises(TypeError):
        opts.max_registers = "many"


def test_launch_warns_for_a_foreign_stream_object(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    class Foreign:
        def __init__(self, s): self.s = s
        def __cuda_stream__(self): return self.s.__cuda_stream__()

    s = d.create_stream()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        nanocuda.launch(Foreign(s), cfg, k, 0, 0, 0, 4)
    assert [w.category for w in seen] == [DeprecationWarning], seen
    assert str(seen[0].message).startswith("Passing foreign stream objects to this function via the stream "
                                           "protocol is deprecated. Convert the object explicitly using Stream(obj)")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nanocuda.launch(s, cfg, k, 0, 0, 0, 4)  # nanocuda's own Stream: no warning
        raises(lambda: nanocuda.launch(Foreign(s), cfg, k, 0, 0, 0, 4), DeprecationWarning, "Stream(obj)")
        for module in ("cuda.core._stream", "torch.cuda.streams", "cupy.cuda.stream"):
            own = type("Stream", (Foreign,), {"__module__": module})
            nanocuda.launch(own(s), cfg, k, 0, 0, 0, 4)  # cuda.core's, torch's, CuPy's: not foreign
    print("ok")
    """, version="13.0")


def test_python_deallocate_raising_in_a_destructor_is_unraisable(mock_libcuda):
    # As an exception in __del__: reported through sys.unraisablehook where it happens, not
    # recorded for the next checked call (which cuda.core's suite met one test later).
    run_on_mock(mock_libcuda, PRELUDE + """
    import gc, sys

    class Failing(nanocuda.MemoryResource):
        is_device_accessible, is_host_accessible, device_id = True, False, 0
        def allocate(self, size, stream=None): raise NotImplementedError
        def deallocate(self, ptr, size, stream=None): raise RuntimeError("deallocate boom")

    seen = []
    sys.unraisablehook = seen.append
    b = nanocuda.Buffer.from_handle(0x10000, 8, mr=Failing())
    del b
    gc.collect()
    d.create_stream().sync()  # no deferred error waits here
    sys.unraisablehook = sys.__unraisablehook__
    assert len(seen) == 1, seen
    assert seen[0].object == "Failing.deallocate(0x10000, 8) while a Buffer was freed", seen[0].object
    assert repr(seen[0].exc_value) == "RuntimeError('deallocate boom')"
    # An explicit close still raises to its caller.
    b = nanocuda.Buffer.from_handle(0x10000, 8, mr=Failing())
    raises(lambda: b.close(), RuntimeError, "deallocate boom")
    assert not b.is_closed  # a failed free leaves the buffer open
    Failing.deallocate = lambda self, ptr, size, stream=None: None
    b.close()
    print("ok")
    """, version="13.0")
