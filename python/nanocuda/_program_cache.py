"""cuda.core's program caches: ProgramCacheResource, InMemoryProgramCache, FileStreamProgramCache."""

from __future__ import annotations

import abc
import collections
import collections.abc
import hashlib
import os
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["ProgramCacheResource", "InMemoryProgramCache", "FileStreamProgramCache"]

# A temporary file older than this was left by a writer that died (a live write takes
# milliseconds); opening or clearing a cache deletes such files, never younger ones.
_STALE_TMP_SECONDS = 3600


def _value_bytes(call: str, value: object) -> bytes:
    """The bytes a cache stores for `value`: bytes-like as is, an ObjectCode's code (read
    from its file when it was made from a path, so the entry never depends on the path)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    from ._nanocuda import ObjectCode

    # cuda.core's ObjectCode stores the same way (code is its bytes or its file's path).
    if isinstance(value, ObjectCode) or (type(value).__name__ == "ObjectCode" and hasattr(value, "code")):
        code = value.code
        if isinstance(code, str):  # made from a file path: store the file's bytes
            try:
                return Path(code).read_bytes()
            except FileNotFoundError:
                raise FileNotFoundError(
                    f"{call}: cannot store path-backed ObjectCode in the cache: {code} no longer exists"
                ) from None
        return bytes(code)
    raise TypeError(f"{call}: cache values must be bytes-like or ObjectCode, got {type(value).__name__}")


def _key_bytes(call: str, key: object) -> bytes:
    """str keys are their UTF-8 bytes, so "k" and b"k" name one entry."""
    if isinstance(key, (bytes, bytearray)):
        return bytes(key)
    if isinstance(key, str):
        return key.encode("utf-8")
    raise TypeError(f"{call}: cache keys must be bytes or str, got {type(key).__name__}")


def _check_cap(call: str, max_size_bytes: object) -> int | None:
    if max_size_bytes is None:
        return None
    if isinstance(max_size_bytes, bool) or not isinstance(max_size_bytes, int):
        raise TypeError(f"{call}: max_size_bytes must be an int or None, got {type(max_size_bytes).__name__}")
    if max_size_bytes <= 0:
        raise ValueError(f"{call}: max_size_bytes must be positive or None (no limit), got {max_size_bytes}")
    return max_size_bytes


def _unlink_if_unchanged(path: Path, st: os.stat_result) -> None:
    """Deletes an entry seen as `st`, unless another process replaced it since (its new value stays)."""
    try:
        now = path.stat()
        if (now.st_ino, now.st_size, now.st_mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns):
            path.unlink()
    except FileNotFoundError:
        pass


class ProgramCacheResource(abc.ABC):
    """A bytes-in, bytes-out store of compiled programs, keyed by bytes or str (UTF-8).

    Values written may be bytes-like or an ObjectCode (its binary is stored); reads return
    the bytes. Use ``get`` rather than ``key in cache`` then ``cache[key]``: another process
    may evict between the two. ``Program.compile(..., cache=cache)`` uses one directly.
    """

    @abc.abstractmethod
    def __getitem__(self, key: bytes | str) -> bytes:
        """The bytes stored under `key`; KeyError when there are none."""

    @abc.abstractmethod
    def __setitem__(self, key: bytes | str, value: object) -> None:
        """Stores `value` (bytes-like or ObjectCode) under `key`."""

    @abc.abstractmethod
    def __delitem__(self, key: bytes | str) -> None:
        """Removes `key`'s entry; KeyError when there is none."""

    @abc.abstractmethod
    def __len__(self) -> int:
        """How many entries the cache holds."""

    @abc.abstractmethod
    def clear(self) -> None:
        """Removes every entry."""

    def get(self, key: bytes | str, default: bytes | None = None) -> bytes | None:
        """``self[key]``, or `default` when there is no entry."""
        try:
            return self[key]
        except KeyError:
            return default

    def update(self, items: object, /) -> None:
        """Stores every (key, value) of a mapping or of an iterable of pairs, one by one."""
        call = f"{type(self).__name__}.update"
        if isinstance(items, collections.abc.Mapping):
            items = items.items()
        elif isinstance(items, (str, bytes, bytearray)) or not isinstance(items, collections.abc.Iterable):
            raise TypeError(f"{call}: items must be a mapping or an iterable of (key, value) pairs, "
                            f"got {type(items).__name__}")
        for i, pair in enumerate(items):  # type: ignore[attr-defined]
            if isinstance(pair, (str, bytes, bytearray)) or not isinstance(pair, collections.abc.Sequence) \
                    or len(pair) != 2:
                raise TypeError(f"{call}: items[{i}] must be a (key, value) pair, got {type(pair).__name__}")
            self[pair[0]] = pair[1]

    def close(self) -> None:  # noqa: B027 - a no-op unless a backend holds resources
        """Releases what the backend holds (nothing by default)."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        self.close()


class InMemoryProgramCache(ProgramCacheResource):
    """A thread-safe in-process cache; with `max_size_bytes`, the least recently used entries
    are dropped once the values' total passes it (an entry larger than the cap is not kept)."""

    def __init__(self, *, max_size_bytes: int | None = None) -> None:
        self._max_size_bytes = _check_cap("InMemoryProgramCache", max_size_bytes)
        self._entries: collections.OrderedDict[bytes, bytes] = collections.OrderedDict()
        self._total_bytes = 0
        self._lock = threading.RLock()

    @property
    def max_size_bytes(self) -> int | None:
        """The size cap in bytes, or None (no cap)."""
        return self._max_size_bytes

    def __getitem__(self, key: bytes | str) -> bytes:
        k = _key_bytes("InMemoryProgramCache[key]", key)
        with self._lock:
            value = self._entries[k]
            self._entries.move_to_end(k)  # a read makes the entry the most recently used
            return value

    def __setitem__(self, key: bytes | str, value: object) -> None:
        k = _key_bytes("InMemoryProgramCache[key] = value", key)
        data = _value_bytes("InMemoryProgramCache[key] = value", value)
        with self._lock:
            old = self._entries.pop(k, None)
            if old is not None:
                self._total_bytes -= len(old)
            self._entries[k] = data
            self._total_bytes += len(data)
            if self._max_size_bytes is not None:
                while self._entries and self._total_bytes > self._max_size_bytes:
                    _, dropped = self._entries.popitem(last=False)
                    self._total_bytes -= len(dropped)

    def __delitem__(self, key: bytes | str) -> None:
        k = _key_bytes("del InMemoryProgramCache[key]", key)
        with self._lock:
            self._total_bytes -= len(self._entries.pop(k))

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        """Removes every entry."""
        with self._lock:
            self._entries.clear()
            self._total_bytes = 0

    def __repr__(self) -> str:
        return f"InMemoryProgramCache(entries={len(self)}, max_size_bytes={self._max_size_bytes})"

    def __reduce__(self) -> object:
        raise TypeError("cannot pickle an InMemoryProgramCache: it lives in this process's memory; use a "
                        "FileStreamProgramCache (the same folder in each process) to share compiled code")


def _default_cache_dir() -> Path:
    """$XDG_CACHE_HOME/cuda-python/program-cache (else ~/.cache/...), where cuda.core keeps it;
    %LOCALAPPDATA% on Windows."""
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA")
        root = Path(base) if base else Path.home() / "AppData" / "Local"
    else:
        base = os.environ.get("XDG_CACHE_HOME")
        root = Path(base) if base else Path.home() / ".cache"
    return root / "cuda-python" / "program-cache"


class FileStreamProgramCache(ProgramCacheResource):
    """A directory cache that several processes may share.

    Each entry is one file, ``entries/<2 hex>/<62 hex>`` (the SHA-256 of the key), holding
    exactly the stored bytes (so cuobjdump and friends read it). A write goes to a private
    file in ``tmp/`` and is renamed into place, so readers only ever see whole entries. With
    `max_size_bytes`, a write that takes the directory past the cap deletes the entries read
    or written longest ago. `path` defaults to cuda.core's folder (``_default_cache_dir``).
    """

    def __init__(self, path: str | os.PathLike | None = None, *, max_size_bytes: int | None = None) -> None:
        self._max_size_bytes = _check_cap("FileStreamProgramCache", max_size_bytes)
        if path is not None and not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"FileStreamProgramCache: path must be a str, os.PathLike or None, got {type(path).__name__}")
        if path is not None and not os.fspath(path):  # Path("") would be the current folder
            raise ValueError("FileStreamProgramCache: path is empty; pass a folder, or None for the default one")
        self._root = Path(path) if path is not None else _default_cache_dir()
        self._entries = self._root / "entries"
        self._tmp = self._root / "tmp"
        try:
            self._root.mkdir(parents=True, exist_ok=True)
            self._entries.mkdir(exist_ok=True)
            self._tmp.mkdir(mode=0o700, exist_ok=True)  # nobody else may swap a file mid-write
        except OSError as e:  # the same OSError subclass, saying which call and folder
            raise type(e)(e.errno, f"FileStreamProgramCache: cannot make the cache folder {self._root} "
                          f"(a folder nanocuda can create and write): {e.strerror}", e.filename) from None
        self._lock = threading.Lock()
        self._sweep_stale_tmp()
        # The directory's size, kept up to date by this process's writes; re-measured by a
        # scan whenever it passes the cap (other processes' writes show up then).
        self._size = self._measure() if self._max_size_bytes is not None else 0

    @property
    def path(self) -> Path:
        """The cache's root folder."""
        return self._root

    @property
    def max_size_bytes(self) -> int | None:
        """The size cap in bytes, or None (no cap)."""
        return self._max_size_bytes

    def _path_for_key(self, key: object) -> Path:
        digest = hashlib.sha256(_key_bytes("FileStreamProgramCache", key)).hexdigest()
        return self._entries / digest[:2] / digest[2:]

    def __getitem__(self, key: bytes | str) -> bytes:
        path = self._path_for_key(key)
        try:
            data = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise KeyError(key) from None
        try:  # a read refreshes the entry's age for the size cap (best effort)
            os.utime(path)
        except OSError:
            pass
        return data

    def __setitem__(self, key: bytes | str, value: object) -> None:
        call = "FileStreamProgramCache[key] = value"
        data = _value_bytes(call, value)
        target = self._path_for_key(key)
        self._tmp.mkdir(mode=0o700, parents=True, exist_ok=True)  # recreated if someone wiped it
        fd, tmp_name = tempfile.mkstemp(prefix="entry-", dir=self._tmp)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                old = target.stat().st_size
            except OSError:
                old = 0
            os.replace(tmp_name, target)
        except BaseException:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass
            raise
        if self._max_size_bytes is not None:
            with self._lock:
                self._size = max(0, self._size + len(data) - old)
                over = self._size > self._max_size_bytes
            if over:
                self._evict()

    def __delitem__(self, key: bytes | str) -> None:
        path = self._path_for_key(key)
        try:
            size = path.stat().st_size
            path.unlink()
        except FileNotFoundError:
            raise KeyError(key) from None
        if self._max_size_bytes is not None:
            with self._lock:
                self._size = max(0, self._size - size)

    def __len__(self) -> int:
        return sum(1 for _ in self._entry_files())

    def clear(self) -> None:
        """Removes every entry (and stale temporary files; a write in flight is left alone)."""
        seen = []
        for path in list(self._entry_files()):
            try:
                seen.append((path, path.stat()))
            except FileNotFoundError:
                pass
        for path, st in seen:
            _unlink_if_unchanged(path, st)
        self._sweep_stale_tmp()
        with self._lock:
            self._size = self._measure() if self._max_size_bytes is not None else 0

    def _entry_files(self):
        try:
            shards = list(os.scandir(self._entries))
        except FileNotFoundError:
            return
        for shard in shards:
            if not shard.is_dir(follow_symlinks=False):
                continue  # a stray file at the top is not an entry
            try:
                for entry in os.scandir(shard.path):
                    if entry.is_file(follow_symlinks=False):
                        yield Path(entry.path)
            except FileNotFoundError:
                continue

    def _tmp_files(self):
        try:
            return [e for e in os.scandir(self._tmp) if e.is_file(follow_symlinks=False)]
        except FileNotFoundError:
            return []

    def _measure(self) -> int:
        total = 0
        for path in list(self._entry_files()):
            try:
                total += path.stat().st_size
            except FileNotFoundError:
                pass
        return total + self._tmp_bytes()

    def _tmp_bytes(self) -> int:
        """What writes in flight take (they count toward the cap too)."""
        total = 0
        for entry in self._tmp_files():
            try:
                total += entry.stat().st_size
            except FileNotFoundError:  # renamed into place meanwhile
                pass
        return total

    def _sweep_stale_tmp(self) -> None:
        cutoff = time.time() - _STALE_TMP_SECONDS
        for entry in self._tmp_files():
            try:
                if entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
            except FileNotFoundError:
                pass

    def _evict(self) -> None:
        """Deletes the least recently used entries until the directory fits the cap."""
        cap = self._max_size_bytes
        assert cap is not None
        rows = []
        for path in list(self._entry_files()):
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            rows.append((max(st.st_atime, st.st_mtime), path, st))
        total = sum(st.st_size for _, _, st in rows) + self._tmp_bytes()
        rows.sort(key=lambda r: r[0])
        for _, path, st in rows:
            if total <= cap:
                break
            _unlink_if_unchanged(path, st)
            total -= st.st_size
        with self._lock:
            self._size = max(0, total)

    def __repr__(self) -> str:
        return f"FileStreamProgramCache({str(self._root)!r}, max_size_bytes={self._max_size_bytes})"

    def __reduce__(self) -> object:
        raise TypeError(f"cannot pickle a FileStreamProgramCache: it holds this process's lock; open "
                        f"FileStreamProgramCache({str(self._root)!r}) in the other process instead")


def compile_with_cache(program, target_type, name_expressions, logs, cache):
    """``Program.compile(..., cache=cache)``: the compile's key is looked up in `cache` and
    the compile runs (and is stored) only on a miss. Only the binary is stored, so a hit's
    ObjectCode has the program's name and the target's type but no symbol_mapping: hence
    name_expressions cannot be combined with a cache."""
    from ._nanocuda import ObjectCode
    from ._program_cache_key import make_program_cache_key

    if not isinstance(cache, ProgramCacheResource):
        raise TypeError("Program.compile: cache must be a nanocuda.utils.ProgramCacheResource (InMemoryProgramCache, "
                        f"FileStreamProgramCache or a subclass), got {type(cache).__name__}")
    if isinstance(name_expressions, (str, bytes)) or (name_expressions is not None and len(tuple(name_expressions))):
        raise ValueError("Program.compile: name_expressions cannot be used with cache=: the cache keeps only the "
                         "binary, so a hit would lose ObjectCode.symbol_mapping; compile without cache= or use "
                         "extern \"C\" / mangled kernel names")
    target = target_type.lower()
    code = program.source
    key = make_program_cache_key(code=code, code_type=program.code_type, options=program.options, target_type=target)
    data = cache.get(key)
    if data is not None:
        make = {"cubin": ObjectCode.from_cubin, "ptx": ObjectCode.from_ptx, "ltoir": ObjectCode.from_ltoir}[target]
        return make(bytes(data), name=program.name)
    out = program.compile(target, logs=logs)
    cache[key] = out
    return out
