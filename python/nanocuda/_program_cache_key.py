"""make_program_cache_key: cuda.core's cache key for C++ (NVRTC), PTX (nvJitLink) and NVVM compiles."""

from __future__ import annotations

import collections.abc
import hashlib
import os
from typing import Optional, Sequence, Union

# Bumped when what goes into a key changes, so old entries stop matching.
_KEY_SCHEMA = b"nanocuda-program-cache-key-1"

# Which targets each source type compiles to (Program.compile's rule).
_TARGETS = {"c++": ("cubin", "ptx", "ltoir"), "ptx": ("cubin", "ptx"), "nvvm": ("ptx", "ltoir")}

_CALL = "make_program_cache_key"


def _option(options: object, name: str) -> object:
    try:
        return getattr(options, name)
    except AttributeError:
        return None


def _emits(value: object) -> bool:
    """Whether NVRTC gets a flag for a path-list option: a str (even empty) or a non-empty
    sequence; False, None and empty sequences add nothing."""
    if isinstance(value, (str, bytes, os.PathLike)):
        return True
    if isinstance(value, collections.abc.Sequence):
        return len(value) > 0
    return False


def _check_nvrtc_inputs(options: object, extra_digest: Optional[bytes]) -> None:
    """A C++ compile whose output depends on files the key cannot see, or that writes files,
    cannot be cached safely: say which option and what to do."""
    for name in ("create_pch", "time", "fdevice_time_trace"):
        if _option(options, name) is not None:
            raise ValueError(f"{_CALL}: option '{name}' writes a file as a side effect of compiling; a cache hit "
                             "would skip it, so such compiles have no cache key")
    if extra_digest is not None:
        return
    external = [n for n in ("include_path", "pre_include") if _emits(_option(options, n))]
    external += [n for n in ("use_pch", "pch_dir") if _option(options, n) is not None]
    if _option(options, "pch"):
        external.append("pch")
    if external:
        raise ValueError(f"{_CALL}: option(s) {', '.join(external)} read files the key cannot see (headers, "
                         "precompiled headers); pass extra_digest= with a fingerprint of their content")
    name = _option(options, "name") or ""
    if "/" in name or "\\" in name:
        raise ValueError(f"{_CALL}: options.name {name!r} has a directory component: NVRTC resolves quoted "
                         "#includes next to it, which the key cannot see; pass extra_digest= or a bare file name")


def _names(name_expressions: object) -> list[tuple[str, str]]:
    if isinstance(name_expressions, (str, bytes)):
        name_expressions = (name_expressions,)
    out = []
    for n in name_expressions or ():  # type: ignore[union-attr]
        if isinstance(n, bytearray):
            raise TypeError(f"{_CALL}: name_expressions must hold str or bytes, got bytearray (unhashable: "
                            "ObjectCode.symbol_mapping is keyed by them)")
        if not isinstance(n, (str, bytes)):
            raise TypeError(f"{_CALL}: name_expressions must hold str or bytes, got {type(n).__name__}")
        # "f" and b"f" are different keys, as in cuda.core (symbol_mapping keeps the type).
        out.append(("s", n) if isinstance(n, str) else ("b", n.decode("utf-8")))
    return sorted(out)


def _library_identity(load) -> bytes:
    """The real path of a loaded compiler library (its file name carries the full version),
    or b"" when it cannot be loaded (the compile would fail the same way)."""
    try:
        return os.path.realpath(load()).encode()
    except Exception:  # noqa: BLE001 - a missing library gives a key that a later probe changes
        return b"unavailable"


def make_program_cache_key(*, code: Union[str, bytes], code_type: str, options: object, target_type: str,
                           name_expressions: Sequence[Union[str, bytes]] = (),
                           extra_digest: Optional[bytes] = None) -> bytes:
    """A 32-byte key for what ``Program(code, code_type, options).compile(target_type,
    name_expressions)`` produces, for a ProgramCacheResource.

    C++: the SHA-256 of nanocuda's compile-cache key (NVRTC build, every flag, the source
    and the local headers it includes, by content). PTX: the PTX, the nvJitLink flags and
    the nvJitLink build. NVVM: the IR, the libNVVM flags and build. Options that read files
    the key cannot see (include_path, pre_include, PCH) need ``extra_digest`` (a fingerprint
    of that content); options that write files (create_pch, time, fdevice_time_trace) make
    a C++ compile uncacheable (ValueError).
    """
    from . import _nanocuda
    from ._nanocuda import Program, ProgramOptions

    if not isinstance(code_type, str):
        raise TypeError(f"{_CALL}: code_type must be a str ('c++', 'ptx' or 'nvvm'), got {type(code_type).__name__}")
    if not isinstance(target_type, str):
        raise TypeError(f"{_CALL}: target_type must be a str, got {type(target_type).__name__}")
    ctype, target = code_type.lower(), target_type.lower()
    if ctype not in _TARGETS:
        raise ValueError(f"{_CALL}: {code_type!r} is not a valid SourceCodeType: expected 'c++', 'ptx' or 'nvvm'")
    if target not in _TARGETS[ctype]:
        raise ValueError(f"{_CALL}: target_type {target_type!r} is not valid for code_type {ctype!r}: "
                         f"expected one of {', '.join(repr(t) for t in _TARGETS[ctype])}")
    if isinstance(code, (bytes, bytearray, memoryview)) and not isinstance(code, str):
        if ctype != "nvvm":
            raise TypeError(f"{_CALL}: code must be str for code_type {ctype!r} (bytes only for 'nvvm')")
        code_bytes = bytes(code)
    elif isinstance(code, str):
        code_bytes = code.encode("utf-8")
    else:
        raise TypeError(f"{_CALL}: code must be a str (or bytes for 'nvvm'), got {type(code).__name__}")
    if extra_digest is not None and not isinstance(extra_digest, bytes):
        raise TypeError(f"{_CALL}: extra_digest must be bytes or None, got {type(extra_digest).__name__}")
    if options is None:
        options = ProgramOptions()
    elif isinstance(options, dict):
        options = ProgramOptions(**options)
    elif not isinstance(options, ProgramOptions):
        raise TypeError(f"{_CALL}: options must be a ProgramOptions, a dict or None, got {type(options).__name__}")
    if ctype != "nvvm" and _option(options, "extra_sources"):
        raise ValueError(f"{_CALL}: extra_sources is only for code_type 'nvvm' (Program rejects it for {ctype!r})")

    h = hashlib.sha256(_KEY_SCHEMA)
    h.update(b"\0" + ctype.encode() + b"\0" + target.encode())
    if ctype == "c++":
        _check_nvrtc_inputs(options, extra_digest)
        names = _names(name_expressions)
        try:
            # The options' flags as cuda.core's key reads them: through the instance's as_bytes
            # (which a caller may replace), whose errors reach the caller.
            for flag in options.as_bytes("nvrtc", target):
                h.update(b"\0flag\0" + flag)
            key = Program(code, "c++", options=options).cache_key(target, [n for _, n in names])
        except (ValueError, TypeError) as e:
            if type(e) not in (ValueError, TypeError) or str(e).startswith(_CALL):
                raise
            raise type(e)(f"{_CALL}: {e}") from e
        h.update(key)
        h.update(b"\0names\0" + "".join(kind for kind, _ in names).encode())
    else:
        # PTX and NVVM compiles ignore name_expressions (Program.compile does), and take only
        # the options their backend uses: the flags say exactly which.
        backend = "nvjitlink" if ctype == "ptx" else "nvvm"
        if ctype == "nvvm" and _option(options, "use_libdevice") and extra_digest is None:
            raise ValueError(f"{_CALL}: use_libdevice=True links the toolkit's libdevice, which the key cannot "
                             "see; pass extra_digest= with a fingerprint of it")
        for flag in options.as_bytes(backend, target):
            h.update(b"\0flag\0" + flag)
        if ctype == "nvvm" and _option(options, "use_libdevice"):
            h.update(b"\0libdevice")
        for name, src in _extra_sources(options) if ctype == "nvvm" else ():
            h.update(b"\0source\0" + name + b"\0" + src)
        load = _nanocuda._internal.nvjitlink_library if ctype == "ptx" else _nanocuda._internal.nvvm_library
        h.update(b"\0lib\0" + _library_identity(load))
        h.update(b"\0code\0" + code_bytes)
    if extra_digest is not None:
        h.update(b"\0extra\0" + extra_digest)
    return h.digest()


def _extra_sources(options: object) -> list[tuple[bytes, bytes]]:
    pairs = _option(options, "extra_sources") or ()
    out = []
    items = list(pairs)
    # The C++ core keeps them flat: [name, source, name, source, ...].
    if items and all(isinstance(x, str) for x in items):
        items = list(zip(items[0::2], items[1::2]))
    for name, src in items:
        out.append((str(name).encode(), src.encode() if isinstance(src, str) else bytes(src)))
    return out
