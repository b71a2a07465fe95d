"""The torch bridge: torch tensors read at C++ speed.

nanocuda reads a torch tensor's pointer, device and geometry through torch's DLPack C
exchange API. That is correct for every tensor, but it costs 60-170 ns per tensor (measured
on H100/H200 hosts), which is most of what separates a launch with 3 tensors from a C++
launch. The bridge is a ~100-line C++ reader compiled on this machine against the installed
torch (``torch.utils.cpp_extension``), so it reads the ``at::Tensor`` directly; anything
unusual (no storage, conj/neg views, other layouts or devices, other dtypes) still goes
through torch's own function, so results and errors are unchanged.

    import nanocuda.torch_bridge
    nanocuda.torch_bridge.enable()      # first time: builds it (~15 s), then cached

Once built (by ``enable()`` or ``nanocuda bench``), later processes load it by themselves the
first time they see a torch tensor (milliseconds, no compiler involved); set
``NANOCUDA_TORCH_BRIDGE=0`` to turn that off. It is never built implicitly: a compile inside
a launch would be a surprise. The build lives in nanocuda's cache folder
(``nanocuda.compile_cache_dir()``), one per torch version and bridge source. It is loaded
only when that folder and the library are the user's own and writable by nobody else;
otherwise a warning says so once and nothing is loaded (``enable()`` builds in a fresh
private folder instead).

Without a built bridge nanocuda needs no setup either: the first time it sees a torch tensor
it reads tensors through torch's stable C ABI (the ``aoti_torch_*`` functions libtorch
exports), found in the libtorch already loaded (nothing is loaded or compiled), after checking
on a few probe tensors that it reports exactly what torch's exchange function reports. If
anything is missing or differs it stays with the exchange API; ``status()`` says which reader
is in use and why. ``NANOCUDA_TORCH_ABI=0`` turns the C ABI reader off.

A Launcher decides how to read each argument on its first call and keeps that choice, so
enable the bridge before binding. ``disable()`` returns to the exchange API.
"""

from __future__ import annotations

import hashlib
import os
import time

__all__ = ["enable", "disable", "is_enabled", "build_directory", "select", "status"]

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_torch_bridge", "bridge.cpp")
_module = None
_disabled_by_user = False
_abi_why = "no torch tensor read yet"  # why the C ABI reader is (not) in use
_abi_types: tuple = ()  # the types it was installed for
_abi_failed = False


def _types():
    import torch

    # Exact types only: other subclasses (FakeTensor, DTensor, ...) may not own their data.
    return (torch.Tensor, torch.nn.Parameter)


def _module_name() -> str:
    import torch

    with open(_SOURCE, "rb") as f:
        digest = hashlib.sha256(f.read() + torch.__version__.encode()).hexdigest()[:12]
    return f"nanocuda_torch_bridge_{digest}"


def build_directory() -> str:
    """Where this torch version's bridge is (or would be) built ("" with no cache folder)."""
    from . import _nanocuda

    root = _nanocuda.compile_cache_dir()
    return os.path.join(root, "torch_bridge", _module_name()) if root else ""


_warned: set[str] = set()


def _trust_problem(directory: str) -> str:
    """Why the bridge library in `directory` must not be loaded ("" when it may): the cache
    folder, torch_bridge/, the build folder and the library must all be the user's own and
    writable by nobody else (the compile cache's rule, checked in C++)."""
    from . import _nanocuda

    if not directory:
        return "there is no cache folder (no home folder)"
    bridge_root = os.path.dirname(directory)
    paths = [os.path.dirname(bridge_root), bridge_root, directory]
    library = os.path.join(directory, _module_name() + ".so")
    if os.path.lexists(library):
        paths.append(library)
    for path in paths:
        if problem := _nanocuda._internal.cache_trust_problem(path):
            return problem
    return ""


def _warn_once(problem: str) -> None:
    import warnings

    if problem not in _warned:
        _warned.add(problem)
        warnings.warn(f"nanocuda.torch_bridge: not loading the cached bridge library: {problem}. "
                      f"Make the folder private (yours, chmod go-w) or set NANOCUDA_CACHE_DIR.",
                      RuntimeWarning, stacklevel=3)


def _install(module) -> None:
    global _module
    from . import _nanocuda

    for t in _types():
        _nanocuda._internal.set_tensor_reader(t, module.reader, module.fallback_slot)
    _module = module


def enable(verbose: bool = False) -> float:
    """Builds the bridge if this torch version has none yet, and installs it.

    Returns the seconds spent (building or loading). Raises ImportError without torch, and
    RuntimeError with the compiler's output when the build fails; nanocuda keeps working
    through the exchange API either way."""
    global _disabled_by_user
    t0 = time.perf_counter()
    _disabled_by_user = False
    if _module is not None:
        _install(_module)
        return time.perf_counter() - t0
    try:
        from torch.utils import cpp_extension
    except ImportError as e:
        raise ImportError("nanocuda.torch_bridge.enable: needs PyTorch") from e
    directory = build_directory()
    if directory:
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
        except OSError:
            pass  # _trust_problem says what is wrong
    if problem := _trust_problem(directory):
        # Never load code another user could have written: build once in a fresh private
        # folder instead (not reused by later processes).
        import tempfile

        if directory:
            _warn_once(problem)
        directory = tempfile.mkdtemp(prefix="nanocuda-torch-bridge-")
    try:
        module = cpp_extension.load(name=_module_name(), sources=[_SOURCE], extra_cflags=["-O2"],
                                    build_directory=directory, verbose=verbose)
    except Exception as e:  # torch raises RuntimeError/CalledProcessError with the log
        raise RuntimeError(f"nanocuda.torch_bridge.enable: building {_SOURCE} in {directory} "
                           f"failed: {e}") from e
    _install(module)
    return time.perf_counter() - t0


def disable() -> None:
    """Back to torch's DLPack exchange API for readers chosen from now on (and no autoload)."""
    global _disabled_by_user
    from . import _nanocuda

    _disabled_by_user = True
    for t in set(_abi_types) | (set(_types()) if _module is not None else set()):
        _nanocuda._internal.set_tensor_reader(t, None)


def is_enabled() -> bool:
    """Whether the compiled bridge is torch.Tensor's reader."""
    return status()["reader"] == "bridge"


def _torch_libraries(torch) -> list[str]:
    # The libtorch that exports aoti_torch_*, by path and by soname: only matched if loaded.
    lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    return [os.path.join(lib, "libtorch_cpu.so"), "libtorch_cpu.so", os.path.join(lib, "libtorch.so")]


def _abi_probes(torch) -> list:
    """CPU tensors covering what the reader decides on: dtypes, views with an offset and
    strides, 0-d, empty, broadcast (stride 0), a Parameter; each with torch's TensorImpl address."""
    # Plain CPU tensors whatever the caller's modes (default device, inference mode).
    with torch.inference_mode(False):
        cpu = {"device": "cpu"}
        base = torch.arange(30, dtype=torch.float32, **cpu).reshape(6, 5)
        tensors = [base, base[1:, 2:].t(), torch.zeros((), dtype=torch.float16, **cpu),
                   torch.empty(0, 3, dtype=torch.int64, **cpu), torch.zeros(4, dtype=torch.bool, **cpu),
                   torch.zeros(3, dtype=torch.bfloat16, **cpu).expand(2, 3),
                   torch.zeros(2, 2, dtype=torch.uint8, **cpu), torch.nn.Parameter(torch.zeros(3, **cpu))]
        return [(t, t._cdata) for t in tensors]


def _try_abi(types: tuple, libraries: list[str], probes: list) -> bool:
    """Readies the C ABI reader against `probes` and installs it for `types`; on any problem
    records why and leaves the exchange API in place. True when installed."""
    global _abi_why, _abi_types, _abi_failed
    from . import _nanocuda

    try:
        why = _nanocuda._internal.torch_abi_prepare(types[0], libraries, probes)
        if not why:
            for t in types:
                _nanocuda._internal.torch_abi_install(t)
            _abi_types = tuple(types)
    except Exception as e:  # noqa: BLE001 - never breaks the read: the exchange API stays
        why = f"{type(e).__name__}: {e}"
    _abi_why = why or "checked against torch's DLPack exchange on probe tensors"
    _abi_failed = bool(why)  # first sight does not retry; select("abi") does
    return not why


def _ready_abi() -> bool:
    """_try_abi with torch's own types, libraries and probes; never raises (first sight must
    not break the read): a failure is recorded in status()."""
    global _abi_why, _abi_failed
    try:
        import torch

        types, libraries, probes = _types(), _torch_libraries(torch), _abi_probes(torch)
    except Exception as e:  # noqa: BLE001 - an odd torch: the exchange API stays
        _abi_why, _abi_failed = f"could not make the probe tensors: {type(e).__name__}: {e}", True
        return False
    return _try_abi(types, libraries, probes)


def select(reader: str) -> None:
    """Chooses how torch tensors are read from now on (Launchers keep the reader they chose at
    their first call): "abi" (torch's stable C ABI, no build), "bridge" (builds or loads the
    compiled bridge, as enable()) or "exchange" (torch's DLPack exchange API, as disable()).
    Raises ValueError naming the reason when "abi" cannot be used here."""
    global _disabled_by_user
    if reader == "bridge":
        enable()
    elif reader == "exchange":
        disable()
    elif reader == "abi":
        try:
            import torch  # noqa: F401
        except ImportError as e:
            raise ImportError("nanocuda.torch_bridge.select: needs PyTorch") from e
        if not _ready_abi():
            raise ValueError(f"nanocuda.torch_bridge.select: the torch C ABI reader is not "
                             f"usable here: {_abi_why}")
        _disabled_by_user = False
    else:
        raise ValueError(f"nanocuda.torch_bridge.select: reader must be 'abi', 'bridge' or "
                         f"'exchange', not {reader!r}")


def status() -> dict:
    """{"reader": "abi" | "bridge" | "exchange", "why": str}: how torch.Tensor is read from
    now on, and why the C ABI reader is or is not the one (never imports torch)."""
    import sys

    from . import _nanocuda

    torch = sys.modules.get("torch")
    tensor = getattr(torch, "Tensor", None) if torch is not None else None
    if tensor is None:
        return {"reader": "exchange", "why": "torch is not imported"}
    reader = _nanocuda._internal.tensor_reader_kind(tensor)
    if reader == "bridge":
        return {"reader": reader, "why": "the compiled bridge is installed (enable())"}
    if reader == "exchange" and _disabled_by_user:
        return {"reader": reader, "why": "disable() was called"}
    return {"reader": reader, "why": _abi_why}


def _autoload(type_: type) -> None:
    """First-sight hook (see _set_first_sight_hook): when a torch tensor type is first read,
    loads an already-built bridge, or else readies the C ABI reader. Never builds; silent."""
    global _abi_why
    if _module is not None or _disabled_by_user:
        return
    if not (type_.__module__ or "").startswith("torch"):
        return
    _autoload_bridge(type_)
    if _module is None and type_ in _types() and not _abi_failed:
        if os.environ.get("NANOCUDA_TORCH_ABI") == "0":
            _abi_why = "NANOCUDA_TORCH_ABI=0"
        else:
            _ready_abi()


def _autoload_bridge(type_: type) -> None:
    if os.environ.get("NANOCUDA_TORCH_BRIDGE") == "0":
        return
    import importlib.machinery
    import importlib.util
    import sys

    import torch  # noqa: F401 - the bridge links against the already-loaded libtorch

    if type_ not in _types():
        return
    name = _module_name()
    directory = build_directory()
    path = os.path.join(directory, name + ".so")
    if not directory or not os.path.isfile(path):
        return
    if problem := _trust_problem(directory):
        _warn_once(problem)
        return
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.modules[name] = module
    _install(module)
