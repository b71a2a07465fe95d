"""CuPy arrays as launch arguments: the pointer comes from ndarray.data (ptr, device_id), not
from a __cuda_array_interface__ dict per call, and only for types that really are CuPy's.
CuPy is not needed: the fakes have CuPy's type names and attributes; the mock driver answers
the device queries of the interface path."""

from mock_run import run_on_mock

FAKES = '''
import struct
import nanocuda
pack = nanocuda._nanocuda._internal.pack_params

class MemoryPointer:  # CuPy's attributes are read-only properties (Cython): so are these
    def __init__(self, ptr, device_id):
        self._ptr, self._device_id = ptr, device_id
    ptr = property(lambda self: self._ptr)
    device_id = property(lambda self: self._device_id)

def cupy_types(module="cupy._core.core"):
    class _ndarray_base:
        reads = 0
        def __init__(self, ptr, device_id=0, interface_ptr=None):
            self._data = MemoryPointer(ptr, device_id)
            self._iface = ptr if interface_ptr is None else interface_ptr
        data = property(lambda self: self._data)
        @property
        def __cuda_array_interface__(self):
            type(self).reads += 1
            return {"data": (self._iface, False), "shape": (4,), "typestr": "<f4", "version": 3}
    _ndarray_base.__module__ = module
    class ndarray(_ndarray_base):
        pass
    ndarray.__module__ = "cupy"
    return ndarray

def packed(arg):
    return struct.unpack("<Q", pack([(0, 8)], "k", arg))[0]
'''


def test_cupy_array_pointer_skips_the_interface_dict(mock_libcuda):
    run_on_mock(mock_libcuda, """
        ndarray = cupy_types()
        assert packed(ndarray(0x7F0000001000)) == 0x7F0000001000
        reads = ndarray.reads  # the first array of the type is checked against its interface
        got = [packed(ndarray(0x7F0000002000 + i * 256, device_id=0)) for i in range(5)]
        assert got == [0x7F0000002000 + i * 256 for i in range(5)], got
        assert ndarray.reads == reads, (ndarray.reads, reads)
        # a class changed after it was first read is still read right
        MemoryPointer.ptr = property(lambda self: self._ptr + 16)
        assert packed(ndarray(0x7F0000003000)) == 0x7F0000003010
        type(ndarray(0)).__bases__[0].data = property(lambda self: MemoryPointer(0x7F0000000100, 0))
        assert packed(ndarray(0x7F0000003000)) == 0x7F0000000110
        print("ok")
    """, prelude=FAKES)


def test_types_that_are_not_cupys_keep_the_interface(mock_libcuda):
    run_on_mock(mock_libcuda, """
        # attributes that disagree with the interface, then CuPy's names in another module
        for ndarray, attr in ((cupy_types(), 0x1000), (cupy_types("notcupy.core"), None)):
            packed(ndarray(attr or 0x7F0000003000, interface_ptr=0x7F0000003000))  # classified
            for ptr in (0x7F0000004000, 0x7F0000005000):
                before = ndarray.reads
                arr = ndarray(attr or ptr, interface_ptr=ptr)
                assert packed(arr) == ptr
                assert ndarray.reads == before + 1, (ndarray, ndarray.reads, before)
        print("ok")
    """, prelude=FAKES)


def test_an_error_from_cupys_attributes_reaches_the_caller(mock_libcuda):
    run_on_mock(mock_libcuda, """
        ndarray = cupy_types()
        packed(ndarray(0x7F0000008000))

        class Refused(Exception):
            pass

        class BadPointer:
            device_id = 0
            @property
            def ptr(self):
                raise Refused("ptr refused")

        bad = ndarray(0x7F0000009000)
        bad._data = BadPointer()
        try:
            packed(bad)
        except Refused as e:
            assert "ptr refused" in str(e)
        else:
            raise AssertionError("no error")
        print("ok")
    """, prelude=FAKES)


CTYPES_CUPY = '''
import ctypes

def ctypes_cupy(pointer_type):
    """CuPy's shape with MemoryPointer fields in the object, as Cython lays out
    `cdef readonly intptr_t ptr`: getters that make a new int on every read."""
    class _ndarray_base:
        def __init__(self, ptr):
            self._data = pointer_type(ptr, 0)
        data = property(lambda self: self._data)
        __cuda_array_interface__ = property(lambda self: {
            "data": (self._data.ptr, False), "shape": (4,), "typestr": "<f4", "version": 3})
    _ndarray_base.__module__ = "cupy._core.core"
    return type("ndarray", (_ndarray_base,), {"__module__": "cupy"})
'''


def test_memory_pointer_fields_read_in_place_give_what_the_getter_gives(mock_libcuda):
    run_on_mock(mock_libcuda, """
        class MemoryPointer(ctypes.Structure):
            _fields_ = [("ptr", ctypes.c_uint64), ("device_id", ctypes.c_int32)]
        ndarray = ctypes_cupy(MemoryPointer)
        arrays = [ndarray(0x7F0000010000 + 0x100 * i) for i in range(12)]
        # the first reads find and confirm the field; later ones read it in place
        for _ in range(2):
            assert [packed(a) for a in arrays] == [0x7F0000010000 + 0x100 * i for i in range(12)]
        arrays[0].data.ptr = 0x7F0000020000  # read live from the object, never remembered
        assert packed(arrays[0]) == 0x7F0000020000
        # a MemoryPointer type changed since: its getter's answer again
        MemoryPointer.ptr = property(lambda self: 0x7F0000030000)
        assert packed(arrays[1]) == 0x7F0000030000
        print("ok")
    """, prelude=FAKES + CTYPES_CUPY)


def test_a_getter_that_is_not_the_field_keeps_the_getter(mock_libcuda):
    run_on_mock(mock_libcuda, """
        class MemoryPointer(ctypes.Structure):  # ptr is computed: no word of the object holds it
            _fields_ = [("raw", ctypes.c_uint64), ("device_id", ctypes.c_int32)]
            ptr = property(lambda self: self.raw + 16)
        ndarray = ctypes_cupy(MemoryPointer)
        got = [packed(ndarray(0x7F0000040000 + 0x100 * i)) for i in range(20)]
        assert got == [0x7F0000040010 + 0x100 * i for i in range(20)], got

        print("ok")
    """, prelude=FAKES + CTYPES_CUPY)


def test_a_getter_that_leaves_the_field_before_it_is_confirmed_keeps_the_getter(mock_libcuda):
    run_on_mock(mock_libcuda, """
        class MemoryPointer(ctypes.Structure):  # the field's value, until the third address
            _fields_ = [("raw", ctypes.c_uint64), ("device_id", ctypes.c_int32)]
            ptr = property(lambda self: self.raw + (0x100000 if self.raw >= 0x7F0000050200 else 0))
        ndarray = ctypes_cupy(MemoryPointer)
        raws = [0x7F0000050000 + 0x100 * i for i in range(12)]
        want = [r + (0x100000 if r >= 0x7F0000050200 else 0) for r in raws]
        for _ in range(2):
            assert [packed(ndarray(r)) for r in raws] == want
        print("ok")
    """, prelude=FAKES + CTYPES_CUPY)


def test_the_arrays_data_field_read_in_place_gives_what_the_getter_gives(mock_libcuda):
    run_on_mock(mock_libcuda, """
        class MemoryPointer(ctypes.Structure):
            _fields_ = [("ptr", ctypes.c_uint64), ("device_id", ctypes.c_int32)]
        class _ndarray_base:  # ndarray.data as Cython lays it out: an object field (a slot here)
            __slots__ = ("data",)
            def __init__(self, ptr):
                self.data = MemoryPointer(ptr, 0)
            __cuda_array_interface__ = property(lambda self: {
                "data": (self.data.ptr, False), "shape": (4,), "typestr": "<f4", "version": 3})
        _ndarray_base.__module__ = "cupy._core.core"
        ndarray = type("ndarray", (_ndarray_base,), {"__module__": "cupy", "__slots__": ()})
        arrays = [ndarray(0x7F0000060000 + 0x100 * i) for i in range(12)]
        for _ in range(2):  # found, confirmed, then read in place: the same pointers
            assert [packed(a) for a in arrays] == [0x7F0000060000 + 0x100 * i for i in range(12)]
        arrays[0].data = MemoryPointer(0x7F0000070000, 0)  # the field is read live, never remembered
        assert packed(arrays[0]) == 0x7F0000070000
        arrays[1].data = None  # not a MemoryPointer: the getter's path, and its error
        raises(lambda: packed(arrays[1]), AttributeError, "ptr")
        del arrays[2].data
        raises(lambda: packed(arrays[2]), AttributeError, "data")
        # the class changed since: its getter's answer again
        _ndarray_base.data = property(lambda self: MemoryPointer(0x7F0000080000, 0))
        assert packed(arrays[3]) == 0x7F0000080000
        print("ok")
    """, prelude=FAKES + CTYPES_CUPY)
