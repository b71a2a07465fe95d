"""The type stubs cover the extension: every public name has a stub (tools/gen_stubs.py)."""

import ast
import pathlib

import nanocuda
from nanocuda import _nanocuda

STUB = pathlib.Path(nanocuda.__file__).with_name("_nanocuda.pyi")


def stub_names() -> set[str]:
    tree = ast.parse(STUB.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def test_every_public_name_has_a_stub():
    public = {n for n in dir(_nanocuda) if not n.startswith("_")}
    missing = public - stub_names()
    assert not missing, f"regenerate stubs with tools/gen_stubs.py; missing: {sorted(missing)}"


def test_the_package_ships_its_stubs():
    assert STUB.is_file()
    assert STUB.with_name("py.typed").is_file()
