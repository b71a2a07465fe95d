# Hand-written stubs for the raw CPython types of nanocuda._nanocuda (see tools/gen_stubs.py).
from typing import Any, Literal

class Launcher:
    """A kernel bound to a launch config and a stream (made by Kernel.bind); call it with only
    the kernel's arguments, and optionally stream=. The fastest way to launch from Python."""

    def __call__(self, *args: object, stream: object | None = None) -> None: ...

# --- TensorMap ---

_Swizzle = int | str | None  # None/"auto", 0/"none", 32/"32B", 64/"64B", 128/"128B", "128B_atom_32B", ...
_Interleave = int | str | None  # 0/"none", 16/"16B", 32/"32B"
_L2 = int | str | None  # 0/"none", 64, 128 (default), 256
_Fill = str | None  # "zero" (default) or "nan"

class TensorMap:
    """A TMA descriptor (CUtensorMap): 128 bytes passed to kernels by value. Shapes are
    row-major (outermost first), strides in bytes."""

    @staticmethod
    def tiled(tensor: Any, box: Sequence[int], *, element_strides: Sequence[int] | None = None,
              interleave: _Interleave = None, swizzle: _Swizzle = None, l2_promotion: _L2 = None,
              oob_fill: _Fill = None, validate_only: bool = False) -> "TensorMap | dict[str, Any]": ...
    @staticmethod
    def tiled_from_pointer(ptr: int, dtype: Any, shape: Sequence[int],
                           strides_bytes: Sequence[int] | None = None, *, box: Sequence[int],
                           element_strides: Sequence[int] | None = None, interleave: _Interleave = None,
                           swizzle: _Swizzle = None, l2_promotion: _L2 = None, oob_fill: _Fill = None,
                           validate_only: bool = False) -> "TensorMap | dict[str, Any]": ...
    @staticmethod
    def im2col(tensor: Any, *, pixels_per_column: int, channels_per_pixel: int | None = None,
               lower_corner: Sequence[int] | None = None, upper_corner: Sequence[int] | None = None,
               element_strides: Sequence[int] | None = None, interleave: _Interleave = None,
               swizzle: _Swizzle = None, l2_promotion: _L2 = None, oob_fill: _Fill = None,
               validate_only: bool = False) -> "TensorMap | dict[str, Any]": ...
    @staticmethod
    def im2col_from_pointer(ptr: int, dtype: Any, shape: Sequence[int],
                            strides_bytes: Sequence[int] | None = None, *, pixels_per_column: int,
                            channels_per_pixel: int | None = None,
                            lower_corner: Sequence[int] | None = None,
                            upper_corner: Sequence[int] | None = None,
                            element_strides: Sequence[int] | None = None,
                            interleave: _Interleave = None, swizzle: _Swizzle = None,
                            l2_promotion: _L2 = None, oob_fill: _Fill = None,
                            validate_only: bool = False) -> "TensorMap | dict[str, Any]": ...
    @staticmethod
    def from_bytes(data: bytes) -> TensorMap: ...
    def replace_address(self, ptr_or_tensor: Any) -> None: ...
    def to_bytes(self) -> bytes: ...
    def __bytes__(self) -> bytes: ...
    def __eq__(self, other: object) -> bool: ...
    @property
    def address(self) -> int: ...
    @property
    def kind(self) -> Literal["tiled", "im2col", "raw"]: ...
    @property
    def geometry(self) -> dict[str, Any] | None: ...
    @property
    def device(self) -> Device:
        """The Device whose memory the map reads (cuda.core's TensorMapDescriptor.device)."""

class ConditionalHandle(int):
    """A conditional node's handle: an int (pass it to kernels as a 64-bit argument) that
    remembers the graph it was made in (graph_id)."""

    graph_id: int

# --- Device.compute_capability (a collections.namedtuple made at import) ---

from typing import NamedTuple

class ComputeCapability(NamedTuple):
    """(major, minor) of a device, as cuda.core's Device.compute_capability."""

    major: int
    minor: int
