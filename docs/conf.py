# Sphinx configuration for nanocuda's documentation site (scripts/docs builds it, warnings as errors).
#
# The API reference is autodoc over the installed package (its docstrings, including the
# nanobind extension's, whose first line carries the signature); the guides are the
# repository's Markdown (README.md, docs/*.md) read by MyST.
import nanocuda

project = "nanocuda"
version = release = nanocuda.__version__
author = "nanocuda authors"

extensions = ["sphinx.ext.autodoc", "myst_parser"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
root_doc = "index"

# nanobind writes "name(args) -> ret" as the docstring's first line: autodoc turns it into
# the signature. Members are listed in source order, as the bindings group them.
autodoc_docstring_signature = True
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "signature"

# README's headings become anchors, so guides can link to its sections.
myst_heading_anchors = 3
html_theme = "alabaster"
html_title = f"nanocuda {release}"


# Some bound methods are made with nb::cpp_function and no name: their docstring starts
# "(self, ...) -> ret", which autodoc cannot use as a signature (and would read `*` as
# emphasis): that line is dropped (the stubs have the signature).
def _nameless_signature(obj):
    sig = getattr(obj, "__nb_signature__", None)
    if not sig or not sig[0][0].startswith("def ("):
        return None
    text = sig[0][0][len("def "):]
    # Defaults are placeholders (\0, \1, ...) in __nb_signature__; show them as "...".
    import re

    return re.sub(r"\\\d+", "...", text)


def _process_docstring(app, what, name, obj, options, lines):
    if _nameless_signature(obj) is not None and lines and lines[0].startswith("("):
        lines[0] = ""


def setup(app):
    app.connect("autodoc-process-docstring", _process_docstring)
    return {"parallel_read_safe": True}

