# Teaches autodoc about the nanobind extension: signatures, kinds and types from its typed stubs.
#
# autodoc recognises Python functions and builtins; nanobind's callables (nb_func, nb_method)
# are neither, so its static methods rendered as `from_cubin = <nanobind.nb_func object>` and
# its functions and constructors had no signature. The package's generated stubs
# (nanocuda/_nanocuda.pyi, kept in sync by tests/python/test_stubs.py) hold every signature
# with its types and docstring: this extension reads them with `ast` and gives autodoc a
# documenter for nanobind callables, each signature (overloads included), static methods'
# kind, properties' types and the stub's docstring.
from __future__ import annotations

import ast
import importlib
import inspect
import os
import re

from sphinx.ext.autodoc import (
    AttributeDocumenter,
    ClassDocumenter,
    FunctionDocumenter,
    MethodDocumenter,
    PropertyDocumenter,
)


class _Stub:
    """One stub definition (a function, method, property or class)."""

    def __init__(self, node: ast.AST):
        self.node = node
        self.signatures: list[str] = []  # "(args) -> ret", one per overload
        self.static = False
        self.classmethod = False
        self.prop_type = ""
        self.doc = ast.get_docstring(node, clean=True) or ""
        self.add(node)

    def add(self, node: ast.AST) -> None:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        node = _Unquote().visit(node)
        decorators = {ast.unparse(d) for d in node.decorator_list}
        self.static = "staticmethod" in decorators
        self.classmethod = "classmethod" in decorators
        if "property" in decorators:
            self.prop_type = ast.unparse(node.returns) if node.returns else ""
            return
        args = ast.unparse(node.args)
        ret = f" -> {ast.unparse(node.returns)}" if node.returns else ""
        sig = f"({args}){ret}"
        if sig not in self.signatures:
            self.signatures.append(sig)
        if not self.doc:
            self.doc = ast.get_docstring(node, clean=True) or ""


class _Unquote(ast.NodeTransformer):
    """Annotations written as strings ("TensorMap | dict") and the stub's private aliases
    (_Swizzle = int | str | None) become the types themselves: readers see what to pass."""

    aliases: dict[str, ast.expr] = {}

    def visit_Constant(self, node):
        if isinstance(node.value, str):
            try:
                return self.visit(ast.parse(node.value, mode="eval").body)
            except SyntaxError:
                pass
        return node

    def visit_Name(self, node):
        alias = self.aliases.get(node.id)
        return self.visit(alias) if alias is not None else node

    def visit_FunctionDef(self, node):
        # Only annotations: defaults and the docstring stay as written.
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                    node.args.vararg, node.args.kwarg]:
            if arg is not None and arg.annotation is not None:
                arg.annotation = self.visit(arg.annotation)
        if node.returns is not None:
            node.returns = self.visit(node.returns)
        return node


def _read_stubs(path: str) -> dict[str, _Stub]:
    """Qualified name ("Stream.sync", "copy") -> its stub, from a .pyi file."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    table: dict[str, _Stub] = {}
    _Unquote.aliases = {
        node.targets[0].id: node.value for node in tree.body
        if isinstance(node, ast.Assign) and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name) and node.targets[0].id.startswith("_")
    }

    def visit(body, prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + node.name
                if name in table:
                    table[name].add(node)  # @overload: one more signature
                else:
                    table[name] = _Stub(node)
                if isinstance(node, ast.ClassDef):
                    visit(node.body, name + ".")

    visit(tree.body, "")
    return table


_STUBS: dict[str, _Stub] = {}


def _is_nanobind(obj) -> bool:
    return type(obj).__module__ == "nanobind" or type(type(obj)).__module__ == "nanobind"


def _is_native(obj) -> bool:
    """A callable with no Python signature: nanobind's, or a C function (TensorMap's, launch).
    A classmethod of a nanobind class (Linker.which_backend) is read as a bound method."""
    if inspect.ismethod(obj):
        obj = obj.__func__
    return _is_nanobind(obj) or inspect.isbuiltin(obj) or type(obj).__name__ in (
        "wrapper_descriptor", "method-wrapper", "method_descriptor")


def _stub_for(owner, name: str) -> _Stub | None:
    """The stub of `owner.name` (owner a class) or of module-level `name` (owner None), when
    the object comes from the extension module."""
    if owner is None:
        return _STUBS.get(name)
    # Aliases (nanocuda.graph.GraphCondition) and subclasses in Python: walk the MRO.
    for cls in getattr(owner, "__mro__", (owner,)):
        stub = _STUBS.get(f"{getattr(cls, '__name__', '')}.{name}")
        if stub is not None:
            return stub
    return None


def _strip_self(sig: str) -> str:
    # "(self, a, b) -> r" -> "(a, b) -> r"; "(self) -> r" -> "() -> r"; also "(self, /, ...)"
    # and a classmethod's "(cls) -> r".
    if sig.startswith("(cls)"):
        return "()" + sig[len("(cls)"):]
    if sig.startswith("(cls, "):
        return "(" + sig[len("(cls, "):]
    if sig.startswith("(self, /, "):
        return "(" + sig[len("(self, /, "):]
    if sig.startswith("(self, "):
        return "(" + sig[len("(self, "):]
    if sig.startswith("(self)"):
        return "()" + sig[len("(self)"):]
    if sig.startswith("(self, /)"):
        return "()" + sig[len("(self, /)"):]
    return sig


def _split(sig: str) -> tuple[str, str]:
    """"(a) -> r" -> ("(a)", "r")."""
    depth = 0
    for i, ch in enumerate(sig):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0:
            rest = sig[i + 1:].strip()
            return sig[: i + 1], rest[2:].strip() if rest.startswith("->") else ""
    return sig, ""


class _StubSignatureMixin:
    """Signature and docstring from the stub; the runtime docstring (whose first lines nanobind
    fills with signatures) is used only where the stub has no text."""

    stub: _Stub | None = None

    def _find_stub(self) -> _Stub | None:
        raise NotImplementedError

    def format_signature(self, **kwargs) -> str:
        self.stub = self._find_stub()
        if self.stub is None or not self.stub.signatures:
            return super().format_signature(**kwargs)
        out = []
        for sig in self.stub.signatures:
            if self._drop_self():
                sig = _strip_self(sig)
            args, ret = _split(sig)
            out.append(args + (f" -> {ret}" if ret and self.objtype != "class" else ""))
        return "\n".join(out)

    def _drop_self(self) -> bool:
        return False

    def get_doc(self):
        stub = self.stub or self._find_stub()
        if stub is not None and stub.doc:
            return [stub.doc.splitlines() + [""]]
        docs = super().get_doc()
        return _drop_signature_lines(docs, self.object_name) if _is_native(self.object) else docs


def _drop_signature_lines(docs, name: str):
    # nanobind's docstrings open with "name(args) -> ret" (one line per overload).
    out = []
    for lines in docs or []:
        while lines and (lines[0].startswith(name + "(") or lines[0].startswith("(")):
            lines = lines[1:]
        while lines and not lines[0].strip():
            lines = lines[1:]
        out.append(lines)
    return out


class NbFunctionDocumenter(_StubSignatureMixin, FunctionDocumenter):
    """Module-level nanobind functions (and the C fast paths, e.g. launch)."""

    @classmethod
    def can_document_member(cls, member, membername, isattr, parent) -> bool:
        return (_is_native(member) and membername in _STUBS) or \
            FunctionDocumenter.can_document_member(member, membername, isattr, parent)

    def _find_stub(self):
        if not _is_native(self.object):
            return None
        return _stub_for(None, getattr(self.object, "__name__", self.object_name))


class NbMethodDocumenter(_StubSignatureMixin, MethodDocumenter):
    """Methods and static methods of nanobind classes."""

    # Above AttributeDocumenter, which claims nanobind's static methods (nb_func objects in
    # the class's __dict__ are not routines to `inspect`); plain routines are unaffected.
    priority = AttributeDocumenter.priority + 1

    @classmethod
    def can_document_member(cls, member, membername, isattr, parent) -> bool:
        if isinstance(parent, ClassDocumenter) and _is_native(member) and \
                _stub_for(parent.object, membername) is not None:
            return True
        return MethodDocumenter.can_document_member(member, membername, isattr, parent)

    def import_object(self, raiseerror: bool = False) -> bool:
        ok = super().import_object(raiseerror)
        stub = self._find_stub()
        if ok and stub is not None and stub.static:
            self.member_order = self.member_order - 1  # static methods first, as in cuda.core's docs
        return ok

    def _find_stub(self):
        if not _is_native(self.object):
            return None
        return _stub_for(self.parent, self.object_name)

    def _drop_self(self) -> bool:
        stub = self._find_stub()
        return stub is None or not stub.static

    def add_directive_header(self, sig: str) -> None:
        start = len(self.directive.result)
        super().add_directive_header(sig)
        stub = self._find_stub()
        mine = "".join(self.directive.result[start:])
        if stub is not None and stub.static and ":staticmethod:" not in mine:
            self.add_line("   :staticmethod:", self.get_sourcename())
        if stub is not None and stub.classmethod and ":classmethod:" not in mine:
            self.add_line("   :classmethod:", self.get_sourcename())


class NbPropertyDocumenter(PropertyDocumenter):
    """Properties of nanobind classes: the type from the stub's getter."""

    @classmethod
    def can_document_member(cls, member, membername, isattr, parent) -> bool:
        return PropertyDocumenter.can_document_member(member, membername, isattr, parent)

    def _native(self) -> bool:
        fget = getattr(self.object, "fget", None)
        return fget is not None and _is_native(fget)

    def add_directive_header(self, sig: str) -> None:
        start = len(self.directive.result)
        super().add_directive_header(sig)
        stub = _stub_for(self.parent, self.object_name) if self._native() else None
        if stub is not None and stub.prop_type and ":type:" not in "".join(self.directive.result[start:]):
            self.add_line("   :type: " + stub.prop_type, self.get_sourcename())

    def get_doc(self):
        stub = _stub_for(self.parent, self.object_name) if self._native() else None
        if stub is not None and stub.doc:
            return [stub.doc.splitlines() + [""]]
        return super().get_doc()


class NbClassDocumenter(_StubSignatureMixin, ClassDocumenter):
    """nanobind classes: the constructor's signatures from the stub's __init__."""

    def add_directive_header(self, sig: str) -> None:
        # "Bases: object" on every class says nothing: inheritance is shown only when there
        # is a real base (MemoryResource, NanocudaError, ...).
        saved = self.options
        if getattr(self.object, "__bases__", ()) in ((object,), ()) and saved.get("show-inheritance") is not False:
            self.options = type(saved)(saved)
            self.options["show-inheritance"] = False
        try:
            super().add_directive_header(sig)
        finally:
            self.options = saved

    def get_canonical_fullname(self):
        # Classes live in private modules (nanocuda._nanocuda, ...) and are public under
        # nanocuda and cuda.core's module names (nanocuda.graph): no private canonical name.
        name = super().get_canonical_fullname()
        return None if name is None or "._" in name else name

    def _native(self) -> bool:
        return _is_nanobind(self.object) or (self.object.__module__ == "nanocuda" and
                                              self.object.__name__ in _STUBS)

    def _find_stub(self):
        if not self._native():
            return None
        init = _STUBS.get(f"{self.object.__name__}.__init__")
        return init if init is not None and init.signatures else None

    def _drop_self(self) -> bool:
        return True

    def format_signature(self, **kwargs) -> str:
        if self._native() and self._find_stub() is None:
            self.stub = None
            return ""  # no public constructor: made by factories (Device.create_stream, ...)
        return super().format_signature(**kwargs)

    def get_doc(self):
        if not self._native():
            return ClassDocumenter.get_doc(self)
        # The class's own text (the stub's class docstring), then the constructor's.
        cls_stub = _STUBS.get(self.object.__name__)
        parts = [cls_stub.doc] if cls_stub is not None and cls_stub.doc else []
        init = self._find_stub()
        if init is not None and init.doc and init.doc not in parts:
            parts.append(init.doc)
        if not parts:
            return _drop_signature_lines(ClassDocumenter.get_doc(self), self.object.__name__)
        return [("\n\n".join(parts)).splitlines() + [""]]


def _plain_text_docstring(app, what, name, obj, options, lines) -> None:
    """The extension's docstrings are plain text with `code`, not reStructuredText: escape
    what reST would read as markup (`*args`, `name_`, `a|b`) outside backticks."""
    native = _is_native(obj) or (isinstance(obj, property) and _is_native(obj.fget)) or \
        (isinstance(obj, type) and _is_nanobind(obj))
    if not native:
        return
    literal = False  # inside a "::" literal block (an example): left as written
    for i, line in enumerate(lines):
        if literal and line.strip() and not line.startswith((" ", "\t")):
            literal = False
        if literal:
            continue
        if line.rstrip().endswith("::"):
            literal = True
        parts = line.split("`")
        for j in range(0, len(parts), 2):
            parts[j] = re.sub(r"([*|\\])", r"\\\1", parts[j])
            parts[j] = re.sub(r"(\w)_(?=\W|$)", r"\1\\_", parts[j])
        lines[i] = "`".join(parts)


def _load(app) -> None:
    module = importlib.import_module(app.config.nbdoc_module)
    path = os.path.splitext(module.__file__)[0]
    # The extension's file is _nanocuda.cpython-*.so: the stub sits beside it as _nanocuda.pyi.
    path = os.path.join(os.path.dirname(path), app.config.nbdoc_module.rsplit(".", 1)[-1] + ".pyi")
    _STUBS.clear()
    _STUBS.update(_read_stubs(path))


def _use_class_based_autodoc(app, config) -> None:
    # Sphinx 9 rewrote autodoc without Documenter classes; its class-based form is still
    # there behind this switch, and is the one that can be extended.
    if "autodoc_use_legacy_class_based" in config:
        config.autodoc_use_legacy_class_based = True


def _register(app, config) -> None:
    # After autodoc's own registration (config-inited, priority 500), under the same objtypes
    # (autofunction, automethod, ...), so explicit directives and automodule's members both
    # use these; objects that are not the extension's fall through to autodoc's behaviour.
    for documenter in (NbFunctionDocumenter, NbMethodDocumenter, NbPropertyDocumenter, NbClassDocumenter):
        app.add_autodocumenter(documenter, override=True)


def setup(app):
    app.setup_extension("sphinx.ext.autodoc")
    app.add_config_value("nbdoc_module", "nanocuda._nanocuda", "env")
    app.connect("config-inited", _use_class_based_autodoc, priority=400)
    app.connect("config-inited", _register, priority=900)
    app.connect("builder-inited", _load)
    app.connect("autodoc-process-docstring", _plain_text_docstring)
    return {"parallel_read_safe": True}
