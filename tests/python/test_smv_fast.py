"""StridedMemoryView.from_dlpack(obj, stream_ptr=-1) and as_tensor_map(box) in C
(python/ext/interop/smv_fast.cpp): same views and maps as the Python methods, and every other
call form still reaches them. On the mock driver; a view is itself a C-exchange producer."""

from mock_run import run_on_mock

PRELUDE = '''
import numpy as np
import nanocuda
from nanocuda import _smv_tensor_map
from nanocuda._strided_memory_view import StridedMemoryView as S
nanocuda.Device(0).set_current()
base = S.from_buffer(nanocuda.Buffer(512 * 512 * 2), shape=(512, 512), dtype=np.float16)
'''
ENV = {"NANOCUDA_MOCK_CC": "9.0", "NANOCUDA_MOCK_POINTER": "device"}


def test_the_c_pair_gives_what_the_python_methods_give(mock_libcuda):
    run_on_mock(mock_libcuda, """
        v = S.from_dlpack(base, stream_ptr=-1)
        # unread: a plain StridedMemoryView holding the object itself, no field read yet
        assert type(v) is S and v._pending is base
        assert all(S.__dict__[f].__get__ is not None for f in ("ptr", "shape", "_strides"))
        fast = v.as_tensor_map((64, 64))
        slow = _smv_tensor_map.as_tensor_map(S.from_dlpack(base, stream_ptr=-1), (64, 64))
        assert repr(fast) == repr(slow), (fast, slow)
        assert repr(S.from_dlpack(base, -1).as_tensor_map(box_dim=(64, 64))) == repr(slow)
        # the unread view still reads its object on first use, and is a plain view after it
        assert (v.ptr, v.shape, v.strides) == (base.ptr, base.shape, base.strides)
        assert type(v) is S and v._pending is None
        # an unread view: unknown names are the usual error, a set field stays set
        w = S.from_dlpack(base, stream_ptr=-1)
        try:
            w.no_such_field
        except AttributeError as e:
            assert "'StridedMemoryView' object has no attribute 'no_such_field'" in str(e), e
        else:
            raise AssertionError("no AttributeError")
        w.readonly = True
        assert type(w) is S and w.readonly is True and w.shape == base.shape
        del w.readonly  # fields delete as slots do
        try:
            w.readonly
        except AttributeError as e:
            assert "'StridedMemoryView' object has no attribute 'readonly'" in str(e), e
        else:
            raise AssertionError("deleted field still there")
        # the fields are data descriptors with the slots' docs; they refuse other objects
        assert "first element" in S.ptr.__doc__ and S.ptr.__name__ == "ptr"
        try:
            S.ptr.__get__(object())
        except TypeError as e:
            assert "descriptor 'ptr' for 'StridedMemoryView' objects" in str(e), e
        else:
            raise AssertionError("descriptor applied to an object")
        import copy
        c = copy.copy(S.from_dlpack(base, stream_ptr=-1))
        assert type(c) is S and (c.ptr, c.shape, c.exporting_obj) == (base.ptr, base.shape, base)
        # a failed read leaves the view unread, the same error at each use
        class Bad:
            __dlpack_c_exchange_api__ = S.__dlpack_c_exchange_api__
            def __dlpack__(self, **kw):
                raise BufferError("no export today")
        b = S.from_dlpack(Bad(), stream_ptr=-1)
        for _ in range(2):
            try:
                b.shape
            except BufferError as e:
                assert "no export today" in str(e), e
            else:
                raise AssertionError("an unreadable view read")
        assert type(b._pending) is Bad
        print("ok")
    """, prelude=PRELUDE, **ENV)


def test_other_call_forms_reach_the_python_methods(mock_libcuda):
    run_on_mock(mock_libcuda, """
        v = S.from_dlpack(base, stream_ptr=-1)
        # a list box, options, keywords the C path does not take: the Python method, same map
        want = repr(v.as_tensor_map((64, 64)))
        assert repr(v.as_tensor_map([64, 64])) == want
        assert repr(v.as_tensor_map(box_dim=(64, 64), swizzle=None)) == want
        assert repr(v.as_tensor_map(options={"box_dim": (64, 64)})) == want
        # errors are the Python method's, in cuda.core's words
        for bad, kind, text in (((64,), ValueError, "box_dim must have 2 elements"),
                                ((64, 512), ValueError, "box_dim[1] must be in [1, 256]")):
            try:
                v.as_tensor_map(bad)
            except kind as e:
                assert str(e).startswith("StridedMemoryView.as_tensor_map") and text in str(e), e
            else:
                raise AssertionError(bad)
        try:
            v.as_tensor_map((64, 64), (1, 1))
        except TypeError as e:
            assert "positional" in str(e), e
        else:
            raise AssertionError("two positionals")
        # from_dlpack: no stream_ptr is ambiguous, a subclass is built by the Python method
        try:
            S.from_dlpack(base)
        except BufferError as e:
            assert "StridedMemoryView.from_dlpack" in str(e), e
        else:
            raise AssertionError("stream_ptr=None accepted")
        class Mine(S):
            pass
        m = Mine.from_dlpack(base, stream_ptr=-1)
        assert type(m) is Mine and m.shape == (512, 512)
        for bad in (1 << 80, -2):
            try:
                S.from_dlpack(base, stream_ptr=bad)
            except ValueError as e:
                assert "stream_ptr must be -1" in str(e) and str(bad) in str(e), e
            else:
                raise AssertionError(f"stream_ptr={bad} accepted")
        print("ok")
    """, prelude=PRELUDE, **ENV)


def test_help_shows_the_python_signatures_and_docs(mock_libcuda):
    run_on_mock(mock_libcuda, """
        import inspect
        assert str(inspect.signature(S.from_dlpack)) == "(obj, stream_ptr=None)"
        assert "box_dim=None, *, options=None" in str(inspect.signature(S.as_tensor_map))
        assert "DLPack object" in S.from_dlpack.__doc__
        assert "tiled TMA descriptor" in S.as_tensor_map.__doc__
        print("ok")
    """, prelude=PRELUDE, **ENV)


def test_views_unread_read_and_subclassed_free_what_they_hold(mock_libcuda):
    # the views' dealloc is smv_fast.cpp's (slots cleared from the member table); a Python
    # subclass keeps subtype_dealloc, which hands over to it after its own dict/slots/weakrefs
    run_on_mock(mock_libcuda, """
        import gc, sys, weakref
        class Held:
            pass
        class Sub(S):
            pass
        class Weak(S):
            __slots__ = ("__weakref__", "extra")
        gc.collect()
        n = sys.getrefcount(base)
        for cls in (S, Sub, Weak):
            for read in (False, True):
                v = cls.from_dlpack(base, stream_ptr=-1)
                if read:
                    assert v.shape == base.shape
                h = Held()
                held = weakref.ref(h)
                if cls is Sub:
                    v.attached = h
                elif cls is Weak:
                    v.extra = h
                    view = weakref.ref(v)
                del h
                assert sys.getrefcount(base) > n
                del v
                assert sys.getrefcount(base) == n, (cls, read)
                assert cls is S or held() is None, cls
                assert cls is not Weak or view() is None
        print("ok")
    """, prelude=PRELUDE, **ENV)
