"""The program caches (nanocuda.utils): the ABC, the in-memory and directory caches, their bad input."""

import os
import threading
import time

import pytest

from nanocuda import ObjectCode
from nanocuda.utils import FileStreamProgramCache, InMemoryProgramCache, ProgramCacheResource


class _DictCache(ProgramCacheResource):
    def __init__(self):
        self.d = {}
        self.closed = 0

    def __getitem__(self, key):
        return self.d[key]

    def __setitem__(self, key, value):
        self.d[key] = value

    def __delitem__(self, key):
        del self.d[key]

    def __len__(self):
        return len(self.d)

    def clear(self):
        self.d.clear()

    def close(self):
        self.closed += 1


def test_abc_cannot_be_made_and_names_its_abstract_methods():
    with pytest.raises(TypeError, match="abstract"):
        ProgramCacheResource()
    assert {"__getitem__", "__setitem__", "__delitem__", "__len__", "clear"} == ProgramCacheResource.__abstractmethods__


def test_abc_defaults_get_update_and_context_manager():
    c = _DictCache()
    marker = object()
    assert c.get(b"x") is None and c.get(b"x", marker) is marker
    c.update({b"a": b"1"})
    c.update([(b"b", b"2")])
    assert c.d == {b"a": b"1", b"b": b"2"}
    with c as same:
        assert same is c
    assert c.closed == 1


@pytest.fixture(params=["memory", "files"])
def cache(request, tmp_path):
    if request.param == "memory":
        yield InMemoryProgramCache()
    else:
        with FileStreamProgramCache(tmp_path / "pc") as c:
            yield c


def test_roundtrip_every_value_form(cache, tmp_path):
    payload = b"\x7fELF-not-really"
    src = tmp_path / "k.cubin"
    src.write_bytes(payload)
    cache.update({
        b"bytes": payload,
        b"bytearray": bytearray(payload),
        b"memoryview": memoryview(payload),
        b"object": ObjectCode.from_cubin(payload, name="k"),
        b"file": ObjectCode.from_cubin(str(src)),
    })
    for key in (b"bytes", b"bytearray", b"memoryview", b"object", b"file"):
        assert cache[key] == payload
    assert len(cache) == 5


def test_str_and_bytes_keys_are_one_entry(cache):
    cache["k"] = b"one"
    assert cache[b"k"] == b"one"
    cache[b"k"] = b"two"
    assert cache["k"] == b"two" and len(cache) == 1


def test_missing_keys_delete_and_clear(cache):
    with pytest.raises(KeyError):
        cache[b"nope"]
    with pytest.raises(KeyError):
        del cache[b"nope"]
    cache[b"a"] = b"1"
    del cache[b"a"]
    assert cache.get(b"a") is None
    cache[b"b"] = b"2"
    cache.clear()
    assert len(cache) == 0


def test_bad_keys_and_values_name_the_rule(cache):
    with pytest.raises(TypeError, match="cache keys must be bytes or str, got int"):
        cache[1] = b"x"
    with pytest.raises(TypeError, match="bytes-like or ObjectCode, got str"):
        cache[b"k"] = "text"


@pytest.mark.parametrize("cls", [InMemoryProgramCache, FileStreamProgramCache])
@pytest.mark.parametrize("bad", [0, -5])
def test_size_cap_must_be_positive(cls, bad, tmp_path):
    args = (tmp_path / "pc",) if cls is FileStreamProgramCache else ()
    with pytest.raises(ValueError, match="positive"):
        cls(*args, max_size_bytes=bad)
    with pytest.raises(TypeError, match="max_size_bytes must be an int"):
        cls(*args, max_size_bytes="1k")


def test_in_memory_lru_eviction_and_read_promotion():
    c = InMemoryProgramCache(max_size_bytes=250)
    c[b"a"] = b"a" * 100
    c[b"b"] = b"b" * 100
    c[b"a"]  # a is now the most recently used
    c[b"c"] = b"c" * 100
    assert c.get(b"b") is None and c.get(b"a") and c.get(b"c")
    c[b"huge"] = b"x" * 1000  # larger than the cap: not kept, and it pushes out the rest
    assert c.get(b"huge") is None


def test_in_memory_threads_keep_the_books(tmp_path):
    c = InMemoryProgramCache(max_size_bytes=4096)

    def work(i):
        for j in range(200):
            c[f"{i}-{j}".encode()] = bytes(64)
            c.get(f"{i}-{j - 1}".encode())

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(c) == 4096 // 64


def test_file_cache_layout_persistence_and_private_tmp(tmp_path):
    root = tmp_path / "pc"
    with FileStreamProgramCache(root) as c:
        c[b"k"] = b"payload"
        c[b"k"] = b"newer"
    files = [p for p in (root / "entries").rglob("*") if p.is_file()]
    assert len(files) == 1 and files[0].read_bytes() == b"newer"  # the raw bytes, no header
    assert len(files[0].parent.name) == 2
    assert (root / "tmp").stat().st_mode & 0o077 == 0
    assert FileStreamProgramCache(root)[b"k"] == b"newer"


def test_file_cache_recreates_tmp_and_sweeps_stale_files(tmp_path):
    import shutil

    root = tmp_path / "pc"
    c = FileStreamProgramCache(root)
    shutil.rmtree(root / "tmp")
    c[b"k"] = b"v"
    assert c[b"k"] == b"v"
    old, young = root / "tmp" / "dead-writer", root / "tmp" / "live-writer"
    old.write_bytes(b"x")
    young.write_bytes(b"y")
    then = time.time() - 2 * 3600
    os.utime(old, (then, then))
    FileStreamProgramCache(root)
    assert not old.exists() and young.exists()


def test_file_cache_size_cap_drops_least_recently_used(tmp_path):
    c = FileStreamProgramCache(tmp_path / "pc", max_size_bytes=250)
    c[b"a"] = b"a" * 100
    c[b"b"] = b"b" * 100
    past = time.time() - 100
    for key, age in ((b"a", 50), (b"b", 0)):
        p = c._path_for_key(key)
        os.utime(p, (past + age, past + age))
    c[b"c"] = b"c" * 100
    assert c.get(b"b") is None and c.get(b"a") == b"a" * 100 and c.get(b"c") == b"c" * 100


def test_path_backed_object_code_gone_names_the_file(tmp_path):
    src = tmp_path / "gone.cubin"
    src.write_bytes(b"data")
    code = ObjectCode.from_cubin(str(src))
    src.unlink()
    c = InMemoryProgramCache()
    if isinstance(code.code, str):  # nanocuda reads the file when the ObjectCode is made
        with pytest.raises(FileNotFoundError, match="gone.cubin"):
            c[b"k"] = code
    else:
        c[b"k"] = code
        assert c[b"k"] == b"data"


def test_default_directory_is_cuda_core_s(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    c = FileStreamProgramCache()
    assert c.path == tmp_path / "xdg" / "cuda-python" / "program-cache"
    assert (c.path / "entries").is_dir()


def test_file_cache_rejects_a_bad_path(tmp_path):
    with pytest.raises(TypeError, match="path must be a str, os.PathLike or None, got int"):
        FileStreamProgramCache(3)


def _write_keys(root, tag, n, cap):
    from nanocuda.utils import FileStreamProgramCache

    with FileStreamProgramCache(root, max_size_bytes=cap) as c:
        for i in range(n):
            c[f"{tag}-{i}".encode()] = f"{tag}:{i}".encode() * 8


@pytest.mark.parametrize("cap", [None, 1000])
def test_file_cache_shared_by_processes(tmp_path, cap):
    import multiprocessing

    root = str(tmp_path / "pc")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_write_keys, args=(root, t, 20, cap)) for t in "abc"]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    c = FileStreamProgramCache(root)
    got = {k: c.get(f"{k}-19".encode()) for k in "abc"}
    if cap is None:
        assert len(c) == 60 and all(v == f"{k}:19".encode() * 8 for k, v in got.items())
    else:
        # Each process trims by what it knows; a write by a cache opened now (which measures the
        # folder) brings it under the cap, and every entry left is whole.
        capped = FileStreamProgramCache(root, max_size_bytes=cap)
        capped[b"last"] = b"z" * 100
        files = [p for p in (tmp_path / "pc" / "entries").rglob("*") if p.is_file()]
        assert 0 < len(files) < 61 and sum(p.stat().st_size for p in files) <= cap
        assert capped[b"last"] == b"z" * 100
        for p in files:
            data = p.read_bytes()
            assert data == b"z" * 100 or data == data[:len(data) // 8] * 8


def test_cuda_core_object_code_is_stored_by_its_code(tmp_path):
    class ObjectCode:  # stands in for cuda.core's (same name, a .code of bytes or a path)
        def __init__(self, code):
            self.code = code

    src = tmp_path / "k.cubin"
    src.write_bytes(b"from-a-file")
    c = InMemoryProgramCache()
    c[b"bytes"] = ObjectCode(b"image")
    c[b"path"] = ObjectCode(str(src))
    assert c[b"bytes"] == b"image" and c[b"path"] == b"from-a-file"
