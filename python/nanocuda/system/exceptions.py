"""NVML's errors, one class per nvmlReturn_t, as cuda.core.system names them."""

from __future__ import annotations

import sys



class NvmlError(RuntimeError):
    """A failed NVML call; `code` is its nvmlReturn_t, `name` e.g. "NVML_ERROR_NOT_SUPPORTED"."""

    code: int = -1
    name: str = ""
    call: str = ""
    object: str = ""


_NAMES = {
    1: "UninitializedError", 2: "InvalidArgumentError", 3: "NotSupportedError",
    4: "NoPermissionError", 5: "AlreadyInitializedError", 6: "NotFoundError",
    7: "InsufficientSizeError", 8: "InsufficientPowerError", 9: "DriverNotLoadedError",
    10: "TimeoutError", 11: "IrqIssueError", 12: "LibraryNotFoundError",
    13: "FunctionNotFoundError", 14: "CorruptedInforomError", 15: "GpuIsLostError",
    16: "ResetRequiredError", 17: "OperatingSystemError", 18: "LibRmVersionMismatchError",
    19: "InUseError", 20: "MemoryError", 21: "NoDataError", 22: "VgpuEccNotSupportedError",
    23: "InsufficientResourcesError", 24: "FreqNotSupportedError",
    25: "ArgumentVersionMismatchError", 26: "DeprecatedError", 27: "NotReadyError",
    28: "GpuNotFoundError", 29: "InvalidStateError", 30: "ResetTypeNotSupportedError",
    999: "UnknownError",
}

_BY_CODE: dict[int, type[NvmlError]] = {}
for _code, _name in _NAMES.items():
    _cls = type(_name, (NvmlError,), {"__doc__": f"NVML returned code {_code}.", "__module__": __name__})
    _BY_CODE[_code] = _cls
    globals()[_name] = _cls
del _code, _name, _cls

# The classes the code above made, named for readers and type checkers.
UninitializedError = _BY_CODE[1]
InvalidArgumentError = _BY_CODE[2]
NotSupportedError = _BY_CODE[3]
NoPermissionError = _BY_CODE[4]
NotFoundError = _BY_CODE[6]
TimeoutError = _BY_CODE[10]  # noqa: A001 - cuda.core's name
LibraryNotFoundError = _BY_CODE[12]
FunctionNotFoundError = _BY_CODE[13]
NotReadyError = _BY_CODE[27]
GpuNotFoundError = _BY_CODE[28]
UnknownError = _BY_CODE[999]


_BRIDGED: dict[tuple[int, type], type] = {}


def _class_for(code: int) -> type[NvmlError]:
    # Where the program has imported cuda.bindings.nvml (whose classes are cuda.core.system's
    # errors), the error also is that module's class of the same name, so cuda.core code's
    # `except nvml.NotSupportedError` keeps working. nanocuda never imports it itself.
    cls = _BY_CODE.get(code, UnknownError)
    other = getattr(sys.modules.get("cuda.bindings.nvml"), cls.__name__, None)
    if not isinstance(other, type) or not issubclass(other, Exception):
        return cls
    key = (code, other)
    if key not in _BRIDGED:
        try:
            _BRIDGED[key] = type(cls.__name__, (cls, other), {"__module__": __name__, "__doc__": cls.__doc__})
        except TypeError:  # an incompatible layout: ours alone
            _BRIDGED[key] = cls
    return _BRIDGED[key]


def _from_code(code: int, message: str, name: str = "", call: str = "", obj: str = "") -> NvmlError:
    """The exception for NVML return `code` (the C++ core's NvmlError, mapped once)."""
    exc = _class_for(code)(message)
    exc.code, exc.name, exc.call, exc.object = code, name, call, obj
    return exc


__all__ = ["NvmlError", *sorted(_NAMES.values())]
