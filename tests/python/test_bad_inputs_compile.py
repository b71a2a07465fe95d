"""The bad-input catalogue's compile half: sources, Program/ObjectCode arguments, options,
nanocuda.load and the cache settings. Same pattern as test_bad_inputs.py: each case runs in
its own process (a crash counts as a failure), and the counts by outcome are printed at the
end in the same format. Every case needs NVRTC at most (arch= is given): no GPU."""

import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

Case = collections.namedtuple("Case", "id code exc match gpu owner", defaults=(False, None))

# Shared by every case's process. The kernel files live in a fresh private folder.
PRELUDE = r"""
import os, tempfile, time, warnings
import nanocuda
from nanocuda import Program, ProgramOptions, ObjectCode
SRC = 'extern "C" __global__ void k(float* x) { x[0] = 1.0f; }'
OPTS = ProgramOptions(arch='sm_90a')
D = tempfile.mkdtemp(prefix='nanocuda-bad-compile-')
def write(name, text, encoding='utf-8'):
    path = os.path.join(D, name)
    with open(path, 'w', encoding=encoding) as f:
        f.write(text)
    t = time.time_ns() + 10**9 * (1 + len(os.listdir(D)))  # each write a new time stamp
    os.utime(path, ns=(t, t))
    return path
def touch(path):
    st = os.stat(path)
    os.utime(path, ns=(st.st_mtime_ns + 10**9, st.st_mtime_ns + 10**9))
"""

T, V = "TypeError", "ValueError"
CE = "CompileError"
CASES = [
    # --- sources: NUL bytes, folders, encodings ---
    Case("nul-in-compile", "nanocuda.compile(SRC + '\\0 int broken =', arch='sm_90a')", V, r"NUL byte at offset \d+ \(line 1\)"),
    Case("nul-in-program", "Program('int a;\\n\\0int b;', OPTS)", V, r"NUL byte at offset 7 \(line 2\)"),
    Case("nul-in-ptx-program", "Program('.version 8.0\\0', 'ptx', OPTS)", V, r"ptx source .*NUL byte"),
    Case("nul-in-load", "nanocuda.load(write('n.cu', SRC + '\\0junk'), arch='sm_90a')", V, r"n\.cu holds a NUL byte"),
    Case("from-file-folder", "Program.from_file(D)", V, r"from_file: .* is a folder"),
    Case("from-file-missing", "Program.from_file(D + '/none.cu')", V, r"from_file: cannot read .*none\.cu: No such file"),
    Case("objectcode-cubin-folder", "ObjectCode.from_cubin(D)", V, r"from_cubin: .* is a folder"),
    Case("objectcode-ptx-folder", "ObjectCode.from_ptx(D)", V, r"from_ptx: .* is a folder"),
    Case("load-folder", "nanocuda.load(D, arch='sm_90a')", (IsADirectoryError.__name__, V), r"[Ii]s a (directory|folder)"),
    Case("load-latin1", "nanocuda.load(write('l.cu', '// caf\\xe9\\n' + SRC, 'latin-1'), arch='sm_90a')", V, r"l\.cu is not UTF-8 text \(byte 0xe9 on line 1\)"),
    Case("load-latin1-line-3", "nanocuda.load(write('l3.cu', '\\n\\n// \\xfc\\n' + SRC, 'latin-1'), arch='sm_90a')", V, r"byte 0xfc on line 3"),
    # --- numeric options out of range ---
    Case("max-registers-negative", "ProgramOptions(max_registers=-5)", V, r"max_registers' = -5 is out of range: 0 .* to 255"),
    Case("max-registers-256", "ProgramOptions(max_registers=256)", V, r"max_registers' = 256 is out of range"),
    Case("max-registers-2-40", "ProgramOptions(max_registers=2**40)", V, r"max_registers' = 1099511627776 is out of range"),
    Case("max-registers-2-70", "ProgramOptions(max_registers=2**70)", V, r"max_registers' = \d+ is out of range"),
    Case("max-registers-bool", "ProgramOptions(max_registers=True)", T, r"max_register.* takes an int"),
    Case("max-registers-float", "ProgramOptions(max_registers=32.0)", T, r"max_registers"),
    Case("max-register-count-negative", "ProgramOptions(max_register_count=-1)", V, r"max_register_count' = -1 is out of range"),
    Case("max-registers-assigned", "o = ProgramOptions(arch='sm_90a'); o.max_registers = -5; Program(SRC, o)", V, r"max_registers = -5 is out of range"),
    Case("max-registers-assigned-after", "o = ProgramOptions(arch='sm_90a'); p = Program(SRC, o); p.options.max_registers = -5; o.max_registers = 999; Program(SRC, o).flags()", V, r"max_registers = 999 is out of range"),
    Case("compile-max-registers-negative", "nanocuda.compile(SRC, arch='sm_90a', max_registers=-5)", V, r"max_registers' = -5"),
    Case("split-compile-negative", "ProgramOptions(split_compile=-2)", V, r"split_compile' = -2 is out of range"),
    Case("split-compile-huge", "ProgramOptions(split_compile=2**33)", V, r"split_compile' = 8589934592 is out of range"),
    Case("linker-max-registers-negative", "nanocuda.LinkerOptions(max_register_count=-3)", V, r"max_register_count' = -3 is out of range"),
    # --- defines / include_dirs / name_expressions of the wrong type ---
    Case("compile-defines-int", "nanocuda.compile(SRC, arch='sm_90a', defines=5)", T, r"defines=5 has the wrong type \(int\); it takes 'NAME'"),
    Case("compile-defines-float", "nanocuda.compile(SRC, arch='sm_90a', defines=1.5)", T, r"defines=1\.5 has the wrong type"),
    Case("compile-defines-int-items", "nanocuda.compile(SRC, arch='sm_90a', defines=[1, 2])", T, r"defines.*items are 'NAME'"),
    Case("compile-include-dirs-int", "nanocuda.compile(SRC, arch='sm_90a', include_dirs=5)", T, r"include_dirs=5 has the wrong type \(int\); it takes a folder"),
    Case("load-include-dirs-int", "nanocuda.load(write('i.cu', SRC), arch='sm_90a', include_dirs=5)", T, r"include_dirs=5 has the wrong type"),
    Case("load-defines-int", "nanocuda.load(write('d.cu', SRC), arch='sm_90a', defines=7)", T, r"defines=7 has the wrong type"),
    Case("compile-name-expressions-int", "nanocuda.compile(SRC, arch='sm_90a', name_expressions=5)", T, r"name_expressions takes a str or a list of str, got int"),
    Case("compile-extra-flags-int", "nanocuda.compile(SRC, arch='sm_90a', extra_flags=5)", T, r"extra_flags=5 has the wrong type"),
    # --- Program / ObjectCode arguments that blame the right thing ---
    Case("program-code-type-int", "Program(SRC, 5)", T, r"code_type \(the second argument\) must be 'c\+\+', 'ptx' or 'nvvm'.*got int 5"),
    Case("program-code-type-list", "Program(SRC, ['c++'])", T, r"code_type \(the second argument\).*got list"),
    Case("program-code-type-bogus", "Program(SRC, 'cuda')", V, r"unknown code_type 'cuda'"),
    Case("program-options-int", "Program(SRC, 'c++', 5)", T, r"options must be a nanocuda\.ProgramOptions, got int"),
    Case("program-options-dict", "Program(SRC, 'c++', {'arch': 'sm_90a'})", T, r"options must be a nanocuda\.ProgramOptions, got dict"),
    Case("program-code-int", "Program(5, OPTS)", T, r"code must be a str.*got int"),
    Case("from-ptx-cxx-source", "ObjectCode.from_ptx('extern \"C\" __global__ void k() {}\\n')", V, r"from_ptx: module is a str .* not a path to a file, and not PTX \(it has no '\.version'"),
    Case("from-ptx-one-line-text", "ObjectCode.from_ptx('extern \"C\" __global__ void k() {}')", V, r"from_ptx: cannot read .*No such file"),
    Case("from-cubin-text", "ObjectCode.from_cubin('line one\\nline two')", V, r"from_cubin: module is a str .* not a path"),
    Case("from-ptx-int", "ObjectCode.from_ptx(5)", T, r"from_ptx: module must be bytes, a path"),
    Case("compile-logs-int", "Program(SRC, OPTS).compile('cubin', logs=5)", T, r"logs must be a file-like object with write\(\).*got int"),
    Case("compile-logs-str", "Program(SRC, OPTS).compile('cubin', logs='log.txt')", T, r"logs must be a file-like object.*got str"),
    Case("compile-target-bogus", "Program(SRC, OPTS).compile('elf')", V, r"unknown code type 'elf'"),
    # --- Python's own text or nanobind's signature dump, before: now the call and parameter ---
    Case("compile-name-expressions-int-items", "nanocuda.compile(SRC, arch='sm_90a', name_expressions=[1])", T, r"Program\.compile: name_expressions items are str, got int 1"),
    Case("options-include-dirs-int-items", "ProgramOptions(include_dirs=['/usr/include', 1])", T, r"include_dirs=.* has an item of the wrong type \(int\)"),
    Case("program-name-int", "Program(SRC, OPTS, name=5)", T, r"Program: name must be a str, got int 5"),
    Case("compile-name-int", "nanocuda.compile(SRC, arch='sm_90a', name=5)", T, r"Program: name must be a str"),
    Case("compile-target-int", "Program(SRC, OPTS).compile(5)", T, r"Program\.compile: target_type must be 'cubin', 'ptx' or 'ltoir', got int 5"),
    Case("flags-target-int", "Program(SRC, OPTS).flags(5)", T, r"Program\.flags: target must be"),
    Case("cache-key-target-int", "Program(SRC, OPTS).cache_key(5)", T, r"Program\.cache_key: target_type must be"),
    Case("load-path-int", "nanocuda.load(5)", T, r"nanocuda\.load: path must be a str or os\.PathLike, got int"),
    Case("load-dir-int", "nanocuda.load_dir(5)", T, r"nanocuda\.load_dir: folder must be a str or os\.PathLike, got int"),
    Case("load-check-changes-str", "nanocuda.load(write('cc.cu', SRC), arch='sm_90a', check_changes='no')", T, r"check_changes must be a bool, got str"),
    Case("from-file-int", "Program.from_file(5)", T, r"Program\.from_file: path must be a str or os\.PathLike, got int"),
    Case("from-cubin-name-int", "ObjectCode.from_cubin(b'x', name=5)", T, r"ObjectCode\.from_cubin: name must be a str, got int 5"),
    Case("from-cubin-symbol-mapping-int", "ObjectCode.from_cubin(b'x', symbol_mapping=5)", T, r"from_cubin: symbol_mapping must be a dict of str to str"),
    Case("from-ptx-symbol-mapping-values", "ObjectCode.from_ptx(b'.version 8.0', symbol_mapping={'a': 1})", T, r"from_ptx: symbol_mapping must be a dict of str to str"),
    Case("options-std-bytes-not-utf8", "ProgramOptions(std=b'\\x80')", V, r"option 'std' = b'\\x80' is not UTF-8 text"),
    Case("options-std-nul", "ProgramOptions(std='c++17\\0')", V, r"option 'std' holds a NUL byte"),
    Case("options-defines-nul", "ProgramOptions(defines=['A\\0B'])", V, r"option 'defines' holds a NUL byte"),
    Case("options-include-dirs-nul-assigned", "o = ProgramOptions(arch='sm_90a'); o.include_dirs = ['/x\\0y']; Program(SRC, o)", V, r"option 'include_dirs' holds a NUL byte"),
    # --- the cache's settings ---
    Case("cache-max-bytes-word", "os.environ['NANOCUDA_CACHE_MAX_BYTES'] = 'lots'; nanocuda.compile(SRC, arch='sm_90a')", V, r"NANOCUDA_CACHE_MAX_BYTES='lots' is not a size"),
    Case("cache-max-bytes-negative", "os.environ['NANOCUDA_CACHE_MAX_BYTES'] = '-5'; nanocuda.compile(SRC, arch='sm_90a')", V, r"NANOCUDA_CACHE_MAX_BYTES='-5'"),
    Case("cache-max-bytes-fraction", "os.environ['NANOCUDA_CACHE_MAX_BYTES'] = '1.5G'; nanocuda.compile(SRC, arch='sm_90a')", V, r"'1\.5G' is not a size"),
    Case("cache-max-bytes-unit", "os.environ['NANOCUDA_CACHE_MAX_BYTES'] = '1X'; nanocuda.compile_cache_info()", V, r"'1X' is not a size"),
    Case("cache-max-bytes-overflow", "os.environ['NANOCUDA_CACHE_MAX_BYTES'] = '99999999999T'; nanocuda.compile_cache_info()", V, r"is not a size"),
    # --- nanocuda.load: a failed edit keeps failing; hidden kernel names warn ---
    Case("load-failed-edit-second-call", "p = write('e.cu', SRC); m = nanocuda.load(p, arch='sm_90a'); m.code\n"
         "write('e.cu', SRC.replace('1.0f;', '1.0f')); touch(p)\n"
         "try: m.code\nexcept nanocuda.CompileError: pass\nelse: raise AssertionError('first call ran the old kernel')\n"
         "m.code", CE, r"expected a \";\""),
    Case("load-failed-edit-third-call", "p = write('e3.cu', SRC); m = nanocuda.load(p, arch='sm_90a')\n"
         "write('e3.cu', SRC + ' oops'); touch(p)\n"
         "for _ in range(2):\n  try: m.code\n  except nanocuda.CompileError: pass\n"
         "m['k']", CE, r"oops|error"),
    Case("load-failed-header-edit", "h = write('h.cuh', '#define V 1.0f\\n'); p = write('u.cu', '#include \"h.cuh\"\\n' + SRC.replace('1.0f', 'V'))\n"
         "m = nanocuda.load(p, arch='sm_90a'); m.code\nwrite('h.cuh', '#define V 1.0f +\\n'); touch(h)\n"
         "try: m.code\nexcept nanocuda.CompileError: pass\nm.kernel_names", CE, r"error"),
    Case("load-kernel-named-path", "warnings.simplefilter('error')\n"
         "nanocuda.load(write('p.cu', SRC.replace('void k(', 'void path(')), arch='sm_90a')", "UserWarning", r"kernel 'path' .* call the kernel as mod\['path'\]"),
    Case("load-kernel-named-code", "warnings.simplefilter('error')\n"
         "nanocuda.load(write('c.cu', SRC.replace('void k(', 'void code(')), arch='sm_90a')", "UserWarning", r"kernel 'code'"),
    Case("load-kernel-missing-item", "nanocuda.load(write('m.cu', SRC), arch='sm_90a')['nope']", "KeyError", r"m\.cu has no kernel 'nope'; kernels: k"),
    Case("load-kernel-item-int", "nanocuda.load(write('mi.cu', SRC), arch='sm_90a')[0]", T, r"a kernel name is a str, got int"),
]

CHILD = textwrap.dedent("""
    import json, sys, traceback
    prelude, code = sys.argv[1], sys.argv[2]
    ns = {}
    exec(prelude, ns)
    try:
        exec(code, ns)
    except BaseException as e:
        print(json.dumps({"raised": type(e).__name__, "mro": [c.__name__ for c in type(e).__mro__],
                          "message": str(e)}))
    else:
        print(json.dumps({"raised": None}))
""")


def _run(case: Case) -> dict:
    env = dict(os.environ, NANOCUDA_CACHE_DIR=os.environ.get("NANOCUDA_TEST_CACHE", "/tmp/nanocuda-bad-inputs-cache"))
    env.pop("NANOCUDA_CACHE_MAX_BYTES", None)
    try:
        r = subprocess.run([sys.executable, "-c", CHILD, PRELUDE, case.code], capture_output=True,
                           text=True, timeout=180, env=env, cwd="/tmp")
    except subprocess.TimeoutExpired:
        return {"outcome": "hang"}
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or not lines:
        return {"outcome": "crash", "detail": f"exit {r.returncode}: {r.stderr[-2000:]}"}
    got = json.loads(lines[-1])
    if got["raised"] is None:
        return {"outcome": "accepted"}
    wanted = case.exc if isinstance(case.exc, tuple) else (case.exc,)
    type_ok = any(w in got["mro"] for w in wanted)
    message_ok = re.search(case.match, got["message"]) is not None
    generic = "incompatible function arguments" in got["message"] or "bad_cast" in got["message"]
    outcome = "clear" if type_ok and message_ok and not generic else "wrong-error"
    return {"outcome": outcome, "detail": f"{got['raised']}: {got['message'][:600]}"}


def _has_nvrtc() -> bool:
    r = subprocess.run([sys.executable, "-c", "import nanocuda; nanocuda.nvrtc_version()"],
                       capture_output=True, text=True, timeout=120)
    return r.returncode == 0


_results: dict = {}


@pytest.fixture(scope="module")
def results():
    """Runs every case at once, 4 processes at a time (each case still in its own process)."""
    if not _has_nvrtc():
        pytest.skip("no NVRTC: the compile catalogue needs the CUDA toolkit or nvidia-cuda-nvrtc")
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        for case, res in zip(CASES, pool.map(_run, CASES)):
            _results[case.id] = res
    return {"by_id": _results}


def test_catalogue_is_large_and_unique():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) >= 50, len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_bad_input(case, results):
    res = results["by_id"][case.id]
    assert res["outcome"] not in ("crash", "hang"), res
    assert res["outcome"] == "clear", res


def test_catalogue_summary(results, capsys):
    counts = collections.Counter(r["outcome"] for r in results["by_id"].values())
    tried = sum(counts.values())
    line = (f"bad-input catalogue (compile): {tried} inputs tried, " +
            ", ".join(f"{k} {counts.get(k, 0)}" for k in ("clear", "wrong-error", "accepted", "crash", "hang")))
    with capsys.disabled():  # printed even when pytest captures output
        print("\n" + line)
    assert counts.get("crash", 0) == 0 and counts.get("hang", 0) == 0


# --- what these inputs now mean (accepted, and taken the way users expect) ---
def test_one_str_is_one_folder_or_one_define(tmp_path):
    import pathlib

    import nanocuda

    assert nanocuda.ProgramOptions(include_dirs="/usr/include").include_dirs == ["/usr/include"]
    assert nanocuda.ProgramOptions(include_dirs=pathlib.Path("/opt/x")).include_dirs == ["/opt/x"]
    assert nanocuda.ProgramOptions(defines="N=3").defines == ["N=3"]
    assert nanocuda.ProgramOptions(defines={"N": 3, "F": None}).defines == ["N=3", "F"]
    assert nanocuda.ProgramOptions(defines=[("A", "1"), "B"]).defines == ["A=1", "B"]
    src = tmp_path / "k.cu"
    src.write_text('static_assert(N == 3, "N");\nextern "C" __global__ void k() {}\n')
    mod = nanocuda.load(src, arch="sm_90a", include_dirs=str(tmp_path), defines="N=3")
    assert str(tmp_path) in mod.include_dirs and "/" not in mod.include_dirs
    assert mod.kernel_names == ["k"]
    code = nanocuda.compile(src.read_text(), arch="sm_90a", defines={"N": 3}, include_dirs="/usr/include")
    assert code.code[:4] == b"\x7fELF"


def test_cache_max_bytes_takes_units(monkeypatch):
    import nanocuda

    for text, want in (("1G", 1 << 30), ("256MiB", 256 << 20), ("2GB", 2 * 10**9), ("0", 0)):
        monkeypatch.setenv("NANOCUDA_CACHE_MAX_BYTES", text)
        assert nanocuda.compile_cache_info()["disk_max_bytes"] == want


def test_kernels_by_item_and_failed_edits_on_cpu(tmp_path):
    import os

    import nanocuda

    p = tmp_path / "code.cu"
    p.write_text('extern "C" __global__ void code(float* x) { x[0] = 1.0f; }\n')
    with pytest.warns(UserWarning, match=r"kernel 'code'"):
        mod = nanocuda.load(p, arch="sm_90a")
    assert mod.kernel_names == ["code"] and mod.code.code[:4] == b"\x7fELF"  # the attribute
    with pytest.raises(KeyError, match=r"no kernel 'nope'"):
        mod["nope"]
    with pytest.raises(AttributeError, match=r"no kernel 'nope'"):
        mod.nope
    good = mod.code
    p.write_text('extern "C" __global__ void code(float* x) { x[0] = 1.0f }\n')
    os.utime(p, ns=(p.stat().st_mtime_ns + 10**9, p.stat().st_mtime_ns + 10**9))
    for _ in range(3):
        with pytest.raises(nanocuda.CompileError):
            mod.kernel_names
    p.write_text('extern "C" __global__ void code(float* x) { x[0] = 2.0f; }\n')
    os.utime(p, ns=(p.stat().st_mtime_ns + 2 * 10**9, p.stat().st_mtime_ns + 2 * 10**9))
    assert mod.code.code != good.code
