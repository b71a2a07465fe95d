"""nanocuda's exception classes; the extension raises these, mapped in one place."""


class NanocudaError(Exception):
    """Base class of every error nanocuda raises itself."""


class CudaError(NanocudaError, RuntimeError):
    """A CUDA driver call failed.

    Attributes: ``code`` (the CUresult as int), ``name`` ("CUDA_ERROR_INVALID_VALUE"),
    ``description`` (the driver's text), ``call`` (the API, e.g. "cuMemAllocAsync") and
    ``object`` (what it was called on).
    """

    code: int = 0
    name: str = ""
    description: str = ""
    call: str = ""
    object: str = ""


class CooperativeLaunchTooLargeError(CudaError, ValueError):
    """CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: a cooperative launch's grid exceeds the blocks that
    can be resident at once. Also a ValueError (the grid is a bad argument), as cuda.core raises."""


class DriverNotFoundError(CudaError):
    """No usable NVIDIA driver: libcuda.so.1 missing, a stub library, or cuInit failing."""


class DriverTooOldError(CudaError):
    """The NVIDIA driver is older than something needs: nanocuda itself (CUDA 12.4), one feature
    (e.g. a switch conditional node needs 12.8), or code from a newer NVRTC.

    Attributes, besides CudaError's: ``feature`` (what needs the newer driver),
    ``driver_version`` (the installed one, e.g. 12040) and ``required_version`` (e.g. 12080).
    """

    feature: str = ""
    driver_version: int = 0
    required_version: int = 0


class CompileError(NanocudaError, RuntimeError):
    """NVRTC or nvJitLink rejected the code.

    Attributes: ``log`` (the full compiler log), ``options`` (the flags used, a list) and
    ``first_error`` (the first error line, e.g. ``kernel.cu(3): error: ...``).
    """

    log: str = ""
    options: list = []
    first_error: str = ""


_LINK_BRIDGED: dict = {}


def _link_error_class() -> type:
    """The class a failed nvJitLink run (Linker) raises: CompileError, or where the program has
    imported cuda.bindings.nvjitlink (cuda.core raises its nvJitLinkError), a subclass of both,
    so `except nvjitlink.nvJitLinkError` keeps working. nanocuda never imports it itself."""
    import sys

    other = getattr(sys.modules.get("cuda.bindings.nvjitlink"), "nvJitLinkError", None)
    if not isinstance(other, type) or not issubclass(other, Exception):
        return CompileError
    if other not in _LINK_BRIDGED:
        try:
            _LINK_BRIDGED[other] = type("CompileError", (CompileError, other),
                                        {"__module__": __name__, "__doc__": CompileError.__doc__})
        except TypeError:  # an incompatible layout: ours alone
            _LINK_BRIDGED[other] = CompileError
    return _LINK_BRIDGED[other]


class ToolkitNotFoundError(NanocudaError, RuntimeError):
    """NVRTC or nvJitLink could not be found; the message lists every place looked."""


class StateError(ValueError, RuntimeError):
    """An object used in a state that forbids the call (a GraphBuilder not building yet, one
    already ended or closed). Both a RuntimeError (cuda.core's type) and a ValueError (nanocuda's
    type for bad use before this class), so either except clause catches it."""
