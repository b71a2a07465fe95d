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


class DriverNotFoundError(CudaError):
    """No usable NVIDIA driver: libcuda.so.1 missing, a stub library, or cuInit failing."""


class CompileError(NanocudaError, RuntimeError):
    """NVRTC or nvJitLink rejected the code.

    Attributes: ``log`` (the full compiler log), ``options`` (the flags used, a list) and
    ``first_error`` (the first error line, e.g. ``kernel.cu(3): error: ...``).
    """

    log: str = ""
    options: list = []
    first_error: str = ""


class ToolkitNotFoundError(NanocudaError, RuntimeError):
    """NVRTC or nvJitLink could not be found; the message lists every place looked."""
