"""Every public Python name has a docstring: what nanocuda.__all__ exports and its classes' members.

Driven by __all__ and each public class's own attributes, so names added later are checked
without editing this file. The API reference (scripts/docs) is built from these docstrings.
"""

import inspect

import pytest

import nanocuda

# Plain values cannot carry a docstring of their own; the API reference describes them
# in the module's text.
_VALUE_TYPES = (int, float, str, bytes, tuple, list, dict, frozenset, set)


def _doc(obj) -> str:
    """The written documentation of obj, without the signature lines nanobind generates."""
    sig = getattr(obj, "__nb_signature__", None)
    if sig is not None:  # nanobind function: ((signature, docstring, defaults), ...) per overload
        return "\n".join(doc for _, doc, *_ in sig if doc).strip()
    if isinstance(obj, property):
        if obj.__doc__ and obj.__doc__ != getattr(obj.fget, "__doc__", None):
            return obj.__doc__.strip()
        return _doc(obj.fget) if obj.fget is not None else ""
    if isinstance(obj, (staticmethod, classmethod)):
        return _doc(obj.__func__)
    doc = obj.__doc__ if isinstance(obj, type) else inspect.getdoc(obj)
    if isinstance(obj, type) and doc:
        # A raw C type's tp_doc may start with its own signature line: "Name(args)\n--\n\n".
        doc = doc.split("\n--\n\n", 1)[-1]
    return (doc or "").strip()


def _public_names():
    return sorted(set(nanocuda.__all__))


def _public_classes():
    for name in _public_names():
        obj = getattr(nanocuda, name)
        if isinstance(obj, type):
            yield name, obj


def _members(cls):
    """(qualified name, member) for the class's own public methods, properties and static methods."""
    for attr, member in vars(cls).items():
        if attr.startswith("_"):
            continue
        if isinstance(member, type) or isinstance(member, _VALUE_TYPES):
            continue  # nested classes are checked as classes; values hold no docstring
        if callable(member) or isinstance(member, (property, staticmethod, classmethod)) or \
                hasattr(member, "__get__"):
            yield f"{cls.__name__}.{attr}", member


def _inherited_from_builtin(cls, attr: str) -> bool:
    # Exception classes inherit args/with_traceback from BaseException: not ours to document.
    return any(attr in vars(base) for base in cls.__mro__[1:] if base.__module__ == "builtins")


def test_every_exported_name_has_a_docstring():
    missing = []
    for name in _public_names():
        obj = getattr(nanocuda, name)
        if isinstance(obj, _VALUE_TYPES):
            continue
        if not _doc(obj):
            missing.append(name)
    assert not missing, f"public names without a docstring: {missing}"


def test_every_public_method_and_property_has_a_docstring():
    missing = []
    for _, cls in _public_classes():
        for qualname, member in _members(cls):
            if _inherited_from_builtin(cls, qualname.split(".", 1)[1]):
                continue
            if not _doc(member):
                missing.append(qualname)
    assert not missing, f"public methods/properties without a docstring: {sorted(missing)}"


def test_the_checker_sees_a_missing_docstring():
    # The test above must be able to fail: an undocumented function and property are caught.
    def undocumented():
        pass

    class Undocumented:
        @property
        def value(self):
            return 1

    assert _doc(undocumented) == ""
    assert [q for q, m in _members(Undocumented) if not _doc(m)] == ["Undocumented.value"]
    assert _doc(nanocuda.compile)  # and a documented one passes


@pytest.mark.parametrize("name", ["Device", "Stream", "Buffer", "compile", "launch"])
def test_core_names_show_an_example(name):
    # The names a newcomer meets first carry an example in their docstring.
    doc = _doc(getattr(nanocuda, name))
    assert "Example" in doc or ">>>" in doc, f"{name}: no example in its docstring"
