"""A machine-made bad-input sweep over nanocuda's public Python API, run on tools/mock_libcuda.c."""

# Usage: NANOCUDA_LIBCUDA=/path/libcuda_mock.so python3 tools/api_sweep.py [--every N] [--json OUT]
# Builds live objects on the mock driver (SETUP), enumerates every public function, constructor,
# method and property of `nanocuda` and its public subpackages, and calls each with bad values per
# parameter position (BAD), too many and too few arguments, an unknown keyword, and on a closed
# object. Calls run in child processes, many per process: each call is announced before it runs
# and guarded by faulthandler's watchdog, so a crash or a hang is pinned on the call that caused
# it and the next child resumes after it. Stdlib only (a test helper, run by test_api_sweep.py).

import argparse
import collections
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

# Live objects the sweep calls methods on, by class name; each line may fail on some driver
# (that class is then swept through its constructor and static methods only).
SETUP = r'''
import nanocuda as nc, numpy as np
from nanocuda import graph as G
F = {}
def mk(name, fn):
    try:
        F[name] = fn()
    except Exception:
        pass
def kernel():
    src = 'extern "C" __global__ void k3(const float* a, float* b, float* c, int n) {}'
    return nc.compile(src, arch="sm_90a").get_kernel("k3")
KERNEL = CODE = None
def build():
    global KERNEL, CODE
    F.clear()
    mk("Device", lambda: nc.Device(0)); dev = F["Device"]; dev.set_current()
    mk("Stream", lambda: nc.Stream()); s = F["Stream"]
    mk("Event", lambda: dev.create_event())
    mk("Buffer", lambda: nc.Buffer(4096, stream=s))
    mk("PinnedBuffer", lambda: nc.PinnedBuffer(4096))
    if KERNEL is None:
        mk("Kernel", kernel); KERNEL = F.get("Kernel")
    F["Kernel"] = KERNEL
    mk("LaunchConfig", lambda: nc.LaunchConfig(grid=1, block=32))
    mk("Program", lambda: nc.Program('extern "C" __global__ void k() {}', "c++", options=nc.ProgramOptions(arch="sm_90")))
    mk("GraphBuilder", lambda: dev.create_graph_builder())
    mk("GraphDefinition", lambda: G.GraphDefinition()); gd = F.get("GraphDefinition")
    mk("EmptyNode", lambda: gd.empty())
    mk("AllocNode", lambda: gd.allocate(4096))
    mk("MemsetNode", lambda: F["AllocNode"].memset(F["AllocNode"].dptr, 0, 64))
    mk("MemcpyNode", lambda: F["AllocNode"].memcpy(F["AllocNode"].dptr, F["AllocNode"].dptr, 64))
    mk("KernelNode", lambda: gd.launch(F["LaunchConfig"], KERNEL, 0x1000, 0x2000, 0x3000, 7))
    mk("HostCallbackNode", lambda: gd.callback(lambda: None))
    mk("EventRecordNode", lambda: gd.record(F["Event"]))
    mk("EventWaitNode", lambda: gd.wait(F["Event"]))
    mk("GraphCondition", lambda: gd.create_condition(default_value=1))
    mk("IfNode", lambda: gd.if_then(F["GraphCondition"]))
    mk("Graph", lambda: gd.instantiate())
    mk("ExecutableKernelNode", lambda: F["Graph"][F["KernelNode"]])
    mk("ExecutableMemsetNode", lambda: F["Graph"][F["MemsetNode"]])
    mk("ExecutableHostCallbackNode", lambda: F["Graph"][F["HostCallbackNode"]])
    mk("Launcher", lambda: KERNEL.bind(F["LaunchConfig"], stream=s))
    mk("KernelAttributes", lambda: KERNEL.attributes)
    mk("KernelOccupancy", lambda: KERNEL.occupancy)
    if CODE is None:
        mk("ObjectCode", lambda: F["Program"].compile("cubin")); CODE = F.get("ObjectCode")
    F["ObjectCode"] = CODE
    mk("Linker", lambda: nc.Linker(F["ObjectCode"], options=nc.LinkerOptions(arch="sm_90")))
    mk("ManagedBuffer", lambda: nc.ManagedBuffer(4096))
    mk("SMResource", lambda: dev.resources.sm)
    mk("Host", lambda: nc.Host())
    mk("TensorMap", lambda: nc.TensorMap.from_bytes(bytes(128)))
    mk("StridedMemoryView", lambda: nc.StridedMemoryView.from_any_interface(np.zeros(16, np.float32), stream_ptr=-1))
    mk("DeviceMemoryResource", lambda: dev.memory_resource)
    mk("PinnedMemoryResource", lambda: nc.PinnedMemoryResource())
    mk("ManagedMemoryResource", lambda: nc.ManagedMemoryResource())
    mk("VirtualMemoryResource", lambda: nc.VirtualMemoryResource(0))
    mk("LegacyPinnedMemoryResource", lambda: nc.LegacyPinnedMemoryResource())
    mk("GraphMemoryResource", lambda: nc.GraphMemoryResource(0))

    mk("Context", lambda: dev.context)
    mk("DeviceProperties", lambda: dev.properties)
    mk("DeviceResources", lambda: dev.resources)
    mk("ProgramOptions", lambda: nc.ProgramOptions())
    mk("GraphCompleteOptions", lambda: nc.GraphCompleteOptions())
    mk("EventOptions", lambda: nc.EventOptions())
    mk("StreamOptions", lambda: nc.StreamOptions())
build()
def closed(name):
    """A fresh object of class `name`, closed first (None where the class cannot be closed here)."""
    build()
    obj = F.get(name)
    close = getattr(obj, "close", None) or getattr(obj, "destroy", None)
    if close is None or not callable(close):
        return None
    close()
    return obj
'''

# The bad values tried in each parameter position (code evaluated in the child, after SETUP).
BAD = {"none": "None", "neg": "-1", "huge": "2**70", "float": "1.5", "str": "'x'", "bytes": "b'x'",
       "object": "object()", "list": "[]", "wrong-class": "F['LaunchConfig']",
       "neg-huge": "-2**70", "nan": "float('nan')", "tuple-huge": "(2**70, 2**70, 2**70)",
       "tuple-neg": "(-1, -1, -1)", "tuple-none": "(None, None)", "dict": "{'x': 1}",
       "live-event": "F['Event']", "live-definition": "F['GraphDefinition']",
       "closed-buffer": "closed('Buffer')", "closed-stream": "closed('Stream')",
       "closed-event": "closed('Event')", "closed-graph": "closed('Graph')",
       "destroyed-node": "closed('EmptyNode')", "closed-builder": "closed('GraphBuilder')"}
# A plausible good value for a required parameter, by name, so each bad value meets the check of
# its own position (the rest stay good); anything unnamed here gets None.
GOOD = {"stream": "F['Stream']", "upload_stream": "F['Stream']", "event": "F['Event']",
        "buffer": "F['Buffer']", "buf": "F['Buffer']", "dst": "F['Buffer']", "src": "F['Buffer']",
        "kernel": "F['Kernel']", "config": "F['LaunchConfig']", "size": "64", "nbytes": "64",
        "count": "1", "n": "1", "device": "0", "device_id": "0", "value": "0", "width": "1",
        "ptr": "F['Buffer'].handle", "dptr": "F['Buffer'].handle", "handle": "0x1000", "code": "0",
        "source": "'extern \"C\" __global__ void k() {}'", "code_type": "'c++'", "name": "'k'",
        "options": "None", "shape": "(4,)", "dtype": "'float32'", "obj": "np.zeros(4, np.float32)",
        "graph": "F['GraphDefinition']", "condition": "F['GraphCondition']", "path": "'sweep.out'"}
SUBPACKAGES = ("graph", "texture", "utils", "system", "checkpoint", "workflow")
KEPT_DUNDERS = ("__init__", "__call__", "__getitem__", "__setitem__", "__len__", "__iter__",
                "__enter__", "__exit__")
# Blocks or leaves the process by design, or reaches outside the sweep's sandbox.
ALLOW = {"checkpoint", "cli", "main", "bench", "torch_bridge", "torch_ops", "jax_ops"}
TIMEOUT_S = float(os.environ.get("NANOCUDA_SWEEP_TIMEOUT", "5"))
# Calls that prove the harness pins a crash and a hang on the right call (--self-test).
SELF_TEST = [["code", "import os; os.abort()", "crash", "self-test"],  # (no sanitizer report)
             ["code", "import time; time.sleep(600)", "hang", "self-test"],
             ["code", "int('x')", "raise", "self-test"]]
LEAK = re.compile(r"nanocuda::|std::|nb::|bad_cast|basic_string")
DOCUMENTED = ("TypeError", "ValueError", "IndexError", "KeyError", "OverflowError",
              "NotImplementedError", "AttributeError", "NanocudaError", "NvmlError", "OSError",
              "BufferError")  # StridedMemoryView's, as cuda.core's
FAILING = ("crash", "hang", "system-error", "cxx-leak")


def _params_from_nb(sig: str):
    """(positional [(name, has_default)], keyword-only [...], takes *args) from a nanobind signature."""
    inner = sig[sig.index("(") + 1:sig.rindex(")")] if ")" in sig else ""
    parts, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch in "[(" and 1 or (ch in "])" and -1 or 0)
        if ch == "," and depth == 0:
            parts.append(cur.strip()); cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    pos, kwonly, star, varargs = [], [], False, False
    for p in filter(None, parts):
        name = p.split(":")[0].split("=")[0].strip()
        if name in ("self", "/") or name.startswith("_") and not name.startswith("*"):
            continue  # a private keyword is no part of the API
        if name == "*":
            star = True; continue
        if name.startswith("**"):
            continue
        if name.startswith("*"):
            varargs = star = True; continue
        (kwonly if star else pos).append((name, "=" in p))
    return pos, kwonly, varargs


def params(fn):
    nb = getattr(fn, "__nb_signature__", None)
    if nb:
        return _params_from_nb(nb[0][0])
    import inspect
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return [], [], True
    pos, kwonly, varargs = [], [], False
    for p in sig.parameters.values():
        if p.name == "self" or p.name.startswith("_"):
            continue
        has_default = p.default is not inspect.Parameter.empty
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            pos.append((p.name, has_default))
        elif p.kind == p.KEYWORD_ONLY:
            kwonly.append((p.name, has_default))
        elif p.kind == p.VAR_POSITIONAL:
            varargs = True
    return pos, kwonly, varargs


def enumerate_calls(ns: dict) -> list:
    """Every call the sweep makes, in a fixed order: [owner kind, owner, attribute, variant...]."""
    import importlib
    import inspect
    import nanocuda
    F = ns["F"]
    calls, seen = [], set()
    modules = [("nanocuda", nanocuda)] + [(f"nanocuda.{m}", importlib.import_module(f"nanocuda.{m}"))
                                          for m in SUBPACKAGES if m not in ALLOW]
    for modname, mod in modules:
        for name in sorted(getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]):
            if name in ALLOW:
                continue
            obj = getattr(mod, name, None)
            if inspect.isclass(obj):
                if obj in seen or issubclass(obj, BaseException):
                    continue
                seen.add(obj)
                inst = F.get(obj.__name__)
                calls += _class_calls(modname, name, obj, inst if isinstance(inst, obj) else None)
            elif callable(obj) and not inspect.ismodule(obj):
                calls += _call_variants(["module", modname, name], obj)
    if os.environ.get("NANOCUDA_SWEEP_SELF_TEST") == "1":
        calls = SELF_TEST + calls
    return calls


def _call_variants(owner: list, fn) -> list:
    pos, kwonly, varargs = params(fn)
    out = [owner + ["few"], owner + ["unknown-keyword"]]
    if not varargs:
        out.append(owner + ["many"])
    for i in range(min(len(pos), 4)):
        out += [owner + ["pos", i, bad] for bad in BAD]
    for name, _ in kwonly[:4]:
        out += [owner + ["kw", name, bad] for bad in BAD]
    return out


def _class_calls(modname: str, name: str, cls, instance) -> list:
    import inspect
    out = []
    if "__init__" in cls.__dict__ or hasattr(cls.__init__, "__nb_signature__"):
        out += _call_variants(["class", f"{modname}.{name}", "__init__"], cls.__init__)
    for attr in sorted(dir(cls)):
        if attr.startswith("_") and attr not in KEPT_DUNDERS or attr == "__init__" or attr in ALLOW:
            continue
        static = inspect.getattr_static(cls, attr, None)
        if isinstance(static, (staticmethod, classmethod)) or type(static).__name__ == "nb_func":
            out += _call_variants(["class", f"{modname}.{name}", attr], getattr(cls, attr))
        elif instance is None:
            continue
        elif isinstance(static, property):
            out.append(["instance", name, attr, "get"])
            out.append(["instance", name, attr, "closed-get"])
            if static.fset is not None:
                out += [["instance", name, attr, "set", bad] for bad in BAD]
        elif callable(getattr(cls, attr, None)):
            out += _call_variants(["instance", name, attr], getattr(cls, attr))
            out.append(["instance", name, attr, "closed-call"])
            n_pos = len(params(getattr(cls, attr))[0])
            out += [["instance", name, attr, "closed-pos", i, bad] for i in range(min(n_pos, 2))
                    for bad in ("none", "neg", "wrong-class")]
    return out


def _resolve(ns: dict, call: list):
    kind, owner, attr = call[:3]
    F = ns["F"]
    if kind == "module":
        import importlib
        return importlib.import_module(owner), getattr(importlib.import_module(owner), attr)
    if kind == "class":
        import importlib
        modname, _, clsname = owner.rpartition(".")
        cls = getattr(importlib.import_module(modname), clsname)
        return cls, getattr(cls, attr)
    obj = F[owner]
    return obj, getattr(type(obj), attr, None)


def run_one(ns: dict, call: list):
    """Makes one call; returns None (accepted) or the exception it raised."""
    F, ev = ns["F"], (lambda code: eval(code, ns))
    kind, owner, attr, variant = call[:4]
    if kind == "code":
        exec(owner, ns); return None
    target, fn = _resolve(ns, call)
    if variant in ("get", "closed-get", "set", "closed-call", "closed-pos"):
        obj = ns["closed"](owner) if variant.startswith("closed") else F[owner]
        if obj is None:
            return "skipped"
        if variant == "closed-get":
            getattr(obj, attr); return None
        if variant == "get":
            getattr(obj, attr); return None
        if variant == "set":
            setattr(obj, attr, ev(BAD[call[4]])); return None
        pos, kwonly, _ = params(fn)
        args = [ev(GOOD.get(n, "None")) for n, d in pos if not d]
        if variant == "closed-pos":  # a bad value, on a closed object
            args += [ev(GOOD.get(n, "None")) for n, d in pos[len(args):call[4] + 1]]
            args[call[4]] = ev(BAD[call[5]])
        getattr(obj, attr)(*args); return None
    pos, kwonly, varargs = params(fn)
    good = [ev(GOOD.get(n, "None")) for n, d in pos if not d]
    kw = {n: ev(GOOD.get(n, "None")) for n, d in kwonly if not d}
    call_fn = (lambda *a, **k: target(*a, **k)) if attr == "__init__" else \
              (lambda *a, **k: getattr(target, attr)(*a, **k))
    if variant == "few":
        return call_fn()
    if variant == "many":
        return call_fn(*(good + [ev(GOOD.get(n, "None")) for n, d in pos if d] + [1, 2, 3, 4, 5, 6]), **kw)
    if variant == "unknown-keyword":
        return call_fn(*good, nanocuda_sweep_bogus=1, **kw)
    if variant == "pos":
        i, bad = call[4], call[5]
        args = good + [ev(GOOD.get(n, "None")) for n, d in pos[len(good):i + 1]]
        args[i] = ev(BAD[bad])
        return call_fn(*args, **kw)
    kw[call[4]] = ev(BAD[call[5]])
    return call_fn(*good, **kw)


def child(indices: list) -> None:
    """Runs the given calls, one protocol line before ("S i") and after ("R json") each."""
    import faulthandler
    import warnings
    warnings.simplefilter("ignore")
    exec(SETUP, ns := {})
    calls = enumerate_calls(ns)
    out = os.fdopen(os.dup(1), "w", buffering=1)
    for i in indices:
        out.write(f"S {i}\n")
        if i > 0 and calls[i][:3] != calls[i - 1][:3]:
            ns["build"]()  # each callable meets fresh objects
        faulthandler.dump_traceback_later(TIMEOUT_S, exit=True)
        try:
            got = run_one(ns, calls[i])
            res = {"raised": None, "skipped": got == "skipped"}
        except BaseException as e:  # noqa: BLE001 - every outcome is classified
            res = {"raised": type(e).__name__, "mro": [c.__name__ for c in type(e).__mro__],
                   "message": str(e)[:800]}
        finally:
            faulthandler.cancel_dump_traceback_later()
        out.write("R " + json.dumps(res) + "\n")


def classify(call: list, res: dict) -> str:
    if res.get("outcome"):
        return res["outcome"]
    if res["raised"] is None:
        return "skipped" if res.get("skipped") else "accepted"
    msg, mro = res["message"], res["mro"]
    if "SystemError" in mro or "returned a result with an exception set" in msg:
        return "system-error"
    if LEAK.search(msg):
        return "cxx-leak"
    if not any(t in mro for t in DOCUMENTED):
        return "odd-type"
    if mro[0] == "AttributeError" and call[2] not in msg and "setter" not in msg and "set attribute" not in msg:
        return "odd-type"  # an AttributeError is for the attribute asked for, not one read inside
    owner, attr = call[1].rpartition(".")[2], call[2]
    if attr.strip("_") not in msg and owner not in msg and "incompatible function arguments" not in msg:
        return "unnamed"
    return "clear"


def silent_is_bad(call: list) -> bool:
    """Accepted calls that are clearly wrong: extra arguments, an unknown keyword, a closed object."""
    v = call[3]
    return v in ("many", "unknown-keyword") or (v in ("pos", "kw") and str(call[-1]).startswith("closed"))


def sweep(every: int = 1, jobs: int = 2, cwd: str | None = None, self_test: bool = False) -> dict:
    """Runs every `every`-th call (all with 1) in `jobs` child processes; returns the report.
    `self_test` puts SELF_TEST's crash, hang and error first (and always runs them)."""
    cwd = cwd or tempfile.mkdtemp(prefix="nanocuda-sweep-")
    env = dict(os.environ, PYTHONFAULTHANDLER="1", NANOCUDA_SWEEP_SELF_TEST="1" if self_test else "0")
    listing = subprocess.run([sys.executable, __file__, "--list"], capture_output=True, text=True,
                             env=env, cwd=cwd, timeout=300)
    if listing.returncode != 0:
        raise RuntimeError("api_sweep --list failed: " + listing.stderr[-3000:])
    calls = json.loads(listing.stdout.strip().splitlines()[-1])
    todo = sorted(set(range(0, len(calls), every)) | set(range(len(SELF_TEST) if self_test else 0)))
    chunks = [todo[j::jobs] for j in range(jobs)]
    results: dict = {}
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for part in pool.map(lambda c: _drive(c, env, cwd), chunks):
            results.update(part)
    report = collections.defaultdict(list)
    for i, res in sorted(results.items()):
        kind = classify(calls[i], res)
        if kind == "accepted" and not silent_is_bad(calls[i]):
            kind = "accepted-plausible"
        report[kind].append({"call": calls[i], **res})
    return {"total": len(calls), "run": len(todo), "by_kind": dict(report)}


def _drive(indices: list, env: dict, cwd: str) -> dict:
    results, left = {}, list(indices)
    while left:
        p = subprocess.run([sys.executable, __file__, "--child", ",".join(map(str, left))],
                           capture_output=True, text=True, env=env, cwd=cwd, timeout=3600)
        current, started = None, False
        for line in p.stdout.splitlines():
            started = started or line.startswith("S ")
            if line.startswith("S "):
                current = int(line[2:])
            elif line.startswith("R ") and current is not None:
                results[current] = json.loads(line[2:]); current = None
        if not started and p.returncode != 0:  # set-up failed: every child would, so stop here
            raise RuntimeError(f"api_sweep: a child died before its first call: {p.stderr[-3000:]}")
        if current is None:  # finished, or died outside a call: blame the next call, go on
            left = [i for i in left if i not in results]
            if left:
                results[left[0]] = {"outcome": "crash", "detail": f"exit {p.returncode} before the call: {p.stderr[-1500:]}"}
                left = left[1:]
            continue
        outcome = "hang" if "Timeout (" in p.stderr else "crash"
        results[current] = {"outcome": outcome, "detail": f"exit {p.returncode}: {p.stderr[-1500:]}"}
        left = [i for i in left if i not in results]
    return results


def describe(call: list) -> str:
    kind, owner, attr, variant, *rest = call
    if kind == "code":
        return f"{variant}: {owner}"
    return f"{owner}.{attr} [{variant}{' ' + ' '.join(map(str, rest)) if rest else ''}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--list", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--every", type=int, default=1, help="run every N-th call (default: all)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", help="write the whole report here")
    ap.add_argument("--self-test", action="store_true", help="also run a crash, a hang and an error first")
    a = ap.parse_args()
    if a.list:
        exec(SETUP, ns := {})
        return print(json.dumps(enumerate_calls(ns))) or 0
    if a.child is not None:
        return child([int(i) for i in a.child.split(",") if i]) or 0
    rep = sweep(a.every, a.jobs, self_test=a.self_test)
    print(f"api sweep: {rep['run']} of {rep['total']} calls")
    for kind, items in sorted(rep["by_kind"].items()):
        print(f"  {kind}: {len(items)}")
        if kind not in ("clear", "skipped", "accepted-plausible"):
            for it in items[:40]:
                print(f"    {describe(it['call'])}: {it.get('raised') or ''} {(it.get('message') or it.get('detail') or '')[:200]!r}")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rep, indent=1))
    return 1 if any(rep["by_kind"].get(k) for k in FAILING) else 0


if __name__ == "__main__":
    sys.exit(main())
