# Sphinx configuration for nanocuda's documentation site (scripts/docs builds it, warnings as errors).
#
# The user guide is Markdown (guide/*.md, read by MyST); the Python API pages are autodoc over
# the installed package, with _ext/nbdoc.py giving nanobind's callables their signatures from
# the typed stubs; the C++ reference is generated from the headers by _ext/cppref.py (Doxygen
# XML -> Markdown); the changelog page is made from ../CHANGELOG.md when it exists.
import os
import sys

import nanocuda

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_ext"))

project = "nanocuda"
version = release = nanocuda.__version__
author = "nanocuda authors"
copyright = "nanocuda authors"

extensions = ["sphinx.ext.autodoc", "myst_parser", "nbdoc", "cppref", "changelog", "benchplot"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "_ext"]
root_doc = "index"
# Docstrings write `name` for code (as in Markdown): show it as code, not as a citation.
default_role = "code"
smartquotes = False  # "--use_fast_math" stays two hyphens, not an en dash
suppress_warnings = ["misc.highlighting_failure"]  # prose in a header comment's example block

autodoc_docstring_signature = True
autodoc_member_order = "groupwise"
autodoc_default_options = {"members": True, "show-inheritance": True, "undoc-members": True}
autodoc_typehints = "signature"
autodoc_class_signature = "mixed"
add_module_names = False
python_maximum_signature_line_length = 88  # long signatures one parameter a line

myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

html_theme = "furo"
html_title = f"nanocuda {release}"
html_static_path = ["_static"]
html_css_files = ["nanocuda.css"]
html_favicon = "_static/favicon.svg"  # also spares browsers a /favicon.ico request (a 404)

# "object" in annotations (`-> object`) also names the `object` attribute of CudaError and
# NvmlError; Sphinx then warns that the reference is ambiguous. The builtin is meant.
suppress_warnings += ["ref.python"]
