"""The documentation site documents every public name with its signature (CPU; needs Sphinx).

Builds the site once (the Python API needs no Doxygen: the C++ reference is left out here,
scripts/docs builds it) and reads the result: the Sphinx inventory (objects.inv) must hold
every name of nanocuda.__all__ and of the submodules' __all__, every function, method and
constructor there must show a signature, every public method and property of the
extension's classes (from the typed stubs) must be on its class's page, and no nanobind
object may render as `<nanobind.nb_func object>`. NANOCUDA_DOCS_HTML=DIR checks a site
built already (scripts/docs OUTDIR) instead of building one.
"""

import ast
import html
import importlib
import importlib.util
import os
import re
import subprocess
import sys
import zlib

import pytest

import nanocuda

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODULES = ["nanocuda", "nanocuda.graph", "nanocuda.utils", "nanocuda.system", "nanocuda.typing",
           "nanocuda.texture", "nanocuda.checkpoint", "nanocuda.torch_ops", "nanocuda.torch_bridge"]


def _missing_tools():
    return [m for m in ("sphinx", "myst_parser", "furo") if importlib.util.find_spec(m) is None]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    built = os.environ.get("NANOCUDA_DOCS_HTML")
    if built:
        return built
    missing = _missing_tools()
    if missing:
        pytest.skip(f"the docs toolchain is not installed ({', '.join(missing)}): pip install '.[docs]'")
    out = str(tmp_path_factory.mktemp("docs"))
    # The Python API only: the C++ reference (Doxygen) is scripts/docs's job.
    extensions = "sphinx.ext.autodoc,myst_parser,nbdoc,changelog,benchplot"
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", "-D", f"extensions={extensions}",
         "-d", os.path.join(out, ".doctrees"), os.path.join(ROOT, "docs"), out],
        capture_output=True, text=True, cwd=out, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def _inventory(site):
    """{full name: (role, page)} from objects.inv (Sphinx's inventory, format 2)."""
    with open(os.path.join(site, "objects.inv"), "rb") as f:
        for _ in range(4):
            f.readline()
        text = zlib.decompress(f.read()).decode("utf-8")
    out = {}
    for line in text.splitlines():
        m = re.match(r"(\S+)\s+(py:\w+)\s+-?\d+\s+(\S+)", line)
        if m:
            page = m.group(3).split("#")[0].replace("$", m.group(1))
            out[m.group(1)] = (m.group(2), page)
    return out


def _signature_html(site, page, ident):
    with open(os.path.join(site, page), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'<dt class="sig[^"]*"\s+id="%s">(.*?)</dt>' % re.escape(ident), text, re.S)
    return m.group(1) if m else None


def _public_names():
    for mod_name in MODULES:
        mod = importlib.import_module(mod_name)
        for name in mod.__all__:
            yield mod_name, name, getattr(mod, name)


def test_every_public_name_is_documented(site):
    inv = _inventory(site)
    missing = []
    for mod_name, name, obj in _public_names():
        full = f"{mod_name}.{name}"
        if isinstance(obj, type(nanocuda)):
            if obj.__name__ not in inv:
                missing.append(f"{full} (module page {obj.__name__})")
        elif full not in inv:
            missing.append(full)
    assert not missing, "public names with no entry in the documentation: " + ", ".join(missing)


def test_every_callable_shows_its_signature(site):
    inv = _inventory(site)
    bad = []
    for mod_name, name, obj in _public_names():
        full = f"{mod_name}.{name}"
        role, page = inv.get(full, (None, None))
        if role not in ("py:function", "py:method"):
            continue
        sig = _signature_html(site, page, full)
        if sig is None or "sig-paren" not in sig:
            bad.append(full)
    assert not bad, "documented without a signature: " + ", ".join(bad)


def _stub_classes():
    """{class name: [(member, kind)]} of the extension's public classes, from the stubs."""
    path = os.path.join(os.path.dirname(nanocuda.__file__), "_nanocuda.pyi")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            members = []
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and not item.name.startswith("_"):
                    decorators = {ast.unparse(d) for d in item.decorator_list}
                    kind = "property" if "property" in decorators or any(
                        d.endswith(".setter") for d in decorators) else "method"
                    members.append((item.name, kind))
            out[node.name] = members
    return out


def test_extension_methods_and_properties_are_documented(site):
    inv = _inventory(site)
    stubs = _stub_classes()
    missing, unsigned = [], []
    for name in nanocuda.__all__:
        obj = getattr(nanocuda, name)
        if not isinstance(obj, type) or obj.__name__ not in stubs or obj.__name__ != name:
            continue
        for member, kind in dict(stubs[name]).items():
            full = f"nanocuda.{name}.{member}"
            if full not in inv:
                missing.append(full)
            elif kind == "method":
                sig = _signature_html(site, inv[full][1], full)
                if sig is None or "sig-paren" not in sig:
                    unsigned.append(full)
    assert not missing, "extension members missing from the API pages: " + ", ".join(missing)
    assert not unsigned, "extension methods without a signature: " + ", ".join(unsigned)


def test_signatures_carry_types(site):
    # A nanobind function's page shows the stub's annotations (here the parameter types of
    # gen_stubs.PARAM_TYPES, the return type) and a static method is marked static.
    inv = _inventory(site)
    sig = html.unescape(re.sub(r"<[^>]+>", "", _signature_html(site, inv["nanocuda.copy"][1], "nanocuda.copy")))
    assert "dst: DevicePointer" in sig and "size: int | None" in sig and "stream: StreamLike | None" in sig, sig
    assert "-> None" in sig.replace("\u2192", "->"), sig
    page = inv["nanocuda.ObjectCode.from_cubin"][1]
    sig = html.unescape(re.sub(r"<[^>]+>", "", _signature_html(site, page, "nanocuda.ObjectCode.from_cubin")))
    assert sig.split()[0] == "static" and "ObjectCode" in sig, sig


def test_no_nanobind_object_reprs(site):
    bad = []
    for folder, _, files in os.walk(site):
        for f in files:
            if f.endswith(".html"):
                with open(os.path.join(folder, f), encoding="utf-8") as fh:
                    if re.search(r"nanobind\.nb_(func|method) object", fh.read()):
                        bad.append(os.path.relpath(os.path.join(folder, f), site))
    assert not bad, "pages showing a nanobind object's repr instead of its signature: " + ", ".join(bad)
