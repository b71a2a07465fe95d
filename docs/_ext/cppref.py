# The C++ API reference: runs Doxygen over include/nanocuda and writes one MyST page per header folder.
#
# nanocuda's headers document with plain `//` comments (style.md: comments say why), which
# Doxygen ignores; run as a script, this file is Doxygen's INPUT_FILTER and turns them into
# doc comments (the file's opening block becomes its \file text, a comment after code `///<`).
# As a Sphinx extension it runs Doxygen (XML only) at the start of each build and converts
# the XML to Markdown pages under docs/cpp-api/: plain headings and code blocks rather than
# breathe's C++ domain, whose parser rejects some C++20 declarations (a warning, which the
# -W build turns into a failure).
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HEADERS = os.path.join(ROOT, "include", "nanocuda")
OUT = os.path.join(ROOT, "docs", "cpp-api")

# Folder -> (page title, one line on what it holds); the order of the reference.
FOLDERS = {
    "driver": ("Driver layer", "The one table of driver entry points, checked calls and the error types."),
    "core": ("Devices, streams, events and memory", "RAII owners and views over the driver's objects."),
    "compile": ("Compiling and linking", "NVRTC, nvJitLink and NVVM, the compile cache, modules and kernels."),
    "launch": ("Launches and graphs", "Launch configurations, argument packing, bound kernels and CUDA graphs."),
    "tma": ("TMA descriptors", "Tensor maps: geometry checks, encoding and the descriptor cache."),
    "device": ("Device-side headers", "Headers for kernels (NVRTC or nvcc): TMA, mbarrier, wgmma, clusters, PDL, graph conditionals."),
}


# -- the input filter ---------------------------------------------------------------------------
_TRAILING = re.compile(r"^(\s*\S.*?[;{},)\]])(\s+)//(?![/!<])\s?(.*)$")
_LINE = re.compile(r"^(\s*)//(?![/!])\s?(.*)$")


def filter_header(text: str) -> str:
    lines = text.split("\n")
    out = []
    i = 0
    # The opening comment block is the file's description (its purpose banner).
    banner = []
    while i < len(lines) and _LINE.match(lines[i]):
        banner.append(_LINE.match(lines[i]).group(2))
        i += 1
    if banner:
        # `\\file` takes a name from its own line, so the text starts on the next.
        out = ["/** \\file"]
        code = False
        for b in banner:
            if b.startswith("  ") != code:
                code = not code
                out.append(" * \\code" if code else " * \\endcode")
            out.append(" * " + (b if code else b.replace("#", "\\#")).replace("*/", "* /"))
        out += [" * \\endcode"] if code else []
        out.append(" */")
    in_code = False
    for line in lines[i:]:
        m = _LINE.match(line)
        # A comment line indented past the text is an example: a code block in the docs.
        code = bool(m) and m.group(2).startswith("  ")
        if in_code and not code:
            out.append(f"{indent}/// \\endcode")
            in_code = False
        if m:
            if code and not in_code:
                indent = m.group(1)
                out.append(f"{indent}/// \\code")
                in_code = True
            text = m.group(2) if code else m.group(2).replace("#", "\\#")
            out.append(f"{m.group(1)}/// {text}")
            continue
        m = _TRAILING.match(line)
        if m and '"' not in m.group(1):
            out.append(f"{m.group(1)}{m.group(2)}///< {m.group(3)}")
            continue
        out.append(line)
    return "\n".join(out)


# -- Doxygen --------------------------------------------------------------------------------------
def run_doxygen(xml_dir: str) -> None:
    os.makedirs(xml_dir, exist_ok=True)
    config = f"""
PROJECT_NAME = nanocuda
INPUT = {HEADERS}
RECURSIVE = YES
FILE_PATTERNS = *.h *.cuh
EXTENSION_MAPPING = cuh=C++
EXCLUDE_PATTERNS = */nvrtc_decls.h */driver_api.h */detail/*
EXCLUDE_SYMBOLS = detail *::detail internal *::internal
INPUT_FILTER = "{sys.executable} {os.path.abspath(__file__)}"
FILTER_SOURCE_FILES = NO
OUTPUT_DIRECTORY = {xml_dir}
GENERATE_XML = YES
XML_OUTPUT = .
XML_PROGRAMLISTING = NO
GENERATE_HTML = NO
GENERATE_LATEX = NO
EXTRACT_ALL = YES
EXTRACT_PRIVATE = NO
EXTRACT_STATIC = YES
HIDE_UNDOC_MEMBERS = NO
ENABLE_PREPROCESSING = YES
MACRO_EXPANSION = YES
PREDEFINED = __device__= __host__= __forceinline__= __global__= "__launch_bounds__(x)="
JAVADOC_AUTOBRIEF = NO
MARKDOWN_SUPPORT = YES
QUIET = YES
WARNINGS = NO
WARN_IF_UNDOCUMENTED = NO
"""
    # Doxygen's own warnings (unresolved \\ref-like words in prose) are not the docs' errors:
    # shown only when it fails.
    done = subprocess.run(["doxygen", "-"], input=config, text=True, cwd=xml_dir,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if done.returncode != 0:
        raise RuntimeError(f"cppref: doxygen failed (exit {done.returncode}):\n{done.stderr}")


# -- XML -> Markdown -------------------------------------------------------------------------------
def _text(node) -> str:
    """A description's text: paragraphs separated by blank lines, examples as fenced code."""
    if node is None:
        return ""
    out = []
    for para in node.findall("para"):
        words = []
        for piece in _inline(para):
            if isinstance(piece, tuple):  # a code block ends the paragraph's text
                if "".join(words).strip():
                    out.append(_md(" ".join("".join(words).split())))
                words = []
                out.append("```cpp\n" + piece[0] + "\n```")
            else:
                words.append(piece)
        if "".join(words).strip():
            out.append(_md(" ".join("".join(words).split())))
    return "\n\n".join(out)


def _code_text(node) -> str:
    # Doxygen writes each space of a code line as an <sp/> element.
    out = [node.text or ""]
    for child in node:
        out.append(" " if child.tag == "sp" else _code_text(child))
        out.append(child.tail or "")
    return "".join(out)


def _inline(node):
    if node.text:
        yield node.text
    for child in node:
        if child.tag in ("parameterlist", "simplesect"):
            pass
        elif child.tag == "programlisting":
            lines = [_code_text(c) for c in child.findall("codeline")]
            lines = [ln[2:] if ln.startswith("  ") else ln for ln in lines]  # the comment's indent
            yield ("\n".join(lines).strip("\n"),)
        elif child.tag == "computeroutput":
            yield "`" + "".join(child.itertext()) + "`"
        elif child.tag == "para":
            yield " "
            yield from _inline(child)
        else:
            yield from _inline(child)
        if child.tail:
            yield child.tail


def _md(text: str) -> str:
    # Doc text is prose with `code`: escape what MyST would read as markup outside backticks.
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r"([*_<>\[\]|{}])", r"\\\1", parts[i])
    return "`".join(parts)


def _signature(member) -> str:
    kind = member.get("kind")
    definition = (member.findtext("definition") or "").strip()
    args = (member.findtext("argsstring") or "").strip()
    if kind == "function":
        return f"{definition}{args}"
    if kind == "variable":
        init = (member.findtext("initializer") or "").strip()
        return f"{definition}{args} {init}".strip()
    if kind == "typedef":
        return definition
    if kind == "enum":
        values = [v.findtext("name") for v in member.findall("enumvalue")]
        return f"enum {member.findtext('name')} {{ {', '.join(values)} }}"
    if kind == "define":
        params = [p.findtext("defname") for p in member.findall("param")]
        return f"#define {member.findtext('name')}" + (f"({', '.join(params)})" if params else "")
    return definition or member.findtext("name") or ""


def _member_block(member, scope: str = "") -> list[str]:
    sig = " ".join(_signature(member).split())
    sig = re.sub(r"\s+([,)])", r"\1", sig)
    sig = re.sub(r"<\s+", "<", re.sub(r"\s+>", ">", sig))
    sig = re.sub(r"\s([*&]+)(?=\w)", r"\1 ", sig)  # "T *p" -> "T* p"
    sig = re.sub(r"\s([*&]+)", r"\1", sig)  # "T &" -> "T&"
    if scope:  # the heading names the class: drop its qualification from member names
        sig = sig.replace(scope + "::", "")
    doc = "\n\n".join(t for t in (_text(member.find("briefdescription")),
                                   _text(member.find("detaileddescription"))) if t)
    lines = ["```cpp", sig, "```"]
    if doc:
        lines += ["", doc]
    return lines + [""]


def _public_sections(compound):
    for section in compound.findall("sectiondef"):
        if section.get("kind", "").startswith(("public", "func", "typedef", "enum", "var", "define", "user-defined")):
            yield section


def _header_of(compound) -> str:
    loc = compound.find("location")
    path = loc.get("file", "") if loc is not None else ""
    return os.path.relpath(path, HEADERS) if path.startswith(HEADERS) else ""


def convert(xml_dir: str) -> dict[str, list[str]]:
    """Markdown lines per folder, from Doxygen's XML."""
    index = ET.parse(os.path.join(xml_dir, "index.xml")).getroot()
    pages: dict[str, dict[str, list[str]]] = {f: {} for f in FOLDERS}

    def section_for(header: str) -> list[str] | None:
        folder = header.split("/")[0] if "/" in header else None
        if folder not in pages:
            return None
        return pages[folder].setdefault(header, [])

    def keep(member) -> bool:
        name = member.findtext("name") or ""
        if name.startswith("_") or member.get("prot", "public") != "public":
            return False
        # Macros are implementation details except the version's.
        return member.get("kind") != "define" or name.startswith("NANOCUDA_VERSION")

    free: dict[str, list] = {}  # header -> namespace-level members (functions, types, constants)
    # Namespaces first: their members are listed under the header that declares them.
    entries = sorted(index.findall("compound"), key=lambda e: e.get("kind") != "namespace")
    for entry in entries:
        kind = entry.get("kind")
        if kind == "namespace":
            name = entry.findtext("name") or ""
            if "detail" in name or "internal" in name or not name.startswith("nanocuda"):
                continue
            root = ET.parse(os.path.join(xml_dir, entry.get("refid") + ".xml")).getroot()
            for section in root.find("compounddef").findall("sectiondef"):
                for m in section.findall("memberdef"):
                    loc = m.find("location")
                    path = loc.get("file", "") if loc is not None else ""
                    if keep(m) and path.startswith(HEADERS):
                        free.setdefault(os.path.relpath(path, HEADERS), []).append(m)
            continue
        if kind not in ("class", "struct", "file"):
            continue
        root = ET.parse(os.path.join(xml_dir, entry.get("refid") + ".xml")).getroot()
        compound = root.find("compounddef")
        if compound.get("prot", "public") != "public":
            continue
        if kind == "file":
            header = _header_of(compound)
            lines = section_for(header)
            if lines is None:
                continue
            banner = _text(compound.find("detaileddescription")) or _text(compound.find("briefdescription"))
            members = [m for s in _public_sections(compound) for m in s.findall("memberdef") if keep(m)]
            members += free.pop(header, [])
            lines[:0] = ([banner, ""] if banner else []) + (
                ["### Functions, types and constants", ""] if members else [])
            for m in members:
                lines += _member_block(m)
            continue
        name = compound.findtext("compoundname")
        if "::detail" in name or "::internal" in name or not name.startswith("nanocuda"):
            continue
        header = _header_of(compound)
        lines = section_for(header)
        if lines is None:
            continue
        block = [f"### `{name}`", ""]
        doc = "\n\n".join(t for t in (_text(compound.find("briefdescription")),
                                       _text(compound.find("detaileddescription"))) if t)
        if doc:
            block += [doc, ""]
        bases = [b.text for b in compound.findall("basecompoundref") if b.get("prot") == "public" and b.text]
        if bases:
            block += ["Derives from " + ", ".join(f"`{b}`" for b in bases) + ".", ""]
        for section in _public_sections(compound):
            for m in section.findall("memberdef"):
                if m.get("prot") != "public" or m.findtext("name", "").startswith("operator="):
                    continue
                block += _member_block(m, name)
        lines += block

    out = {}
    for folder, headers in pages.items():
        lines = []
        for header in sorted(headers):
            lines += [f"## `nanocuda/{header}`", ""] + headers[header]
        out[folder] = lines
    return out


def write_pages(xml_dir: str, out_dir: str = OUT) -> list[str]:
    pages = convert(xml_dir)
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    index = ["# C++ API reference", "",
             "Generated by Doxygen from the headers in `include/nanocuda/` (their comments are the",
             "documentation). `#include \"nanocuda/nanocuda.h\"` brings in every host header; kernels",
             "include the device headers (`nanocuda/device/*.cuh`) alone. The {doc}`../guide/cpp` says how",
             "to install and link the library.", "",
             "| page | contents |", "|---|---|"]
    for folder, (title, blurb) in FOLDERS.items():
        index.append(f"| {{doc}}`{title} <{folder}>` | {blurb} |")
    index += ["", "```{toctree}", ":hidden:", ""] + list(FOLDERS) + ["```", ""]
    with open(os.path.join(out_dir, "index.md"), "w") as f:
        f.write("\n".join(index))
    for folder, (title, blurb) in FOLDERS.items():
        with open(os.path.join(out_dir, f"{folder}.md"), "w") as f:
            f.write("\n".join([f"# {title}", "", _md(blurb) + f" Headers under `include/nanocuda/{folder}/`.", ""]
                              + pages[folder]))
    return list(pages)


def _build(app) -> None:
    from sphinx.util import logging

    log = logging.getLogger(__name__)
    if shutil.which("doxygen") is None:
        log.warning("cppref: doxygen is not installed, so the C++ API reference cannot be built "
                    "(Debian: apt-get install doxygen; scripts/docs installs it)")
        os.makedirs(OUT, exist_ok=True)
        with open(os.path.join(OUT, "index.md"), "w") as f:
            f.write("# C++ API reference\n\nNot built: doxygen was not found.\n")
        return
    xml_dir = os.path.join(app.doctreedir, "doxygen-xml")
    if os.path.isdir(xml_dir):
        shutil.rmtree(xml_dir)
    run_doxygen(xml_dir)
    write_pages(xml_dir)


def setup(app):
    app.connect("builder-inited", _build)
    return {"parallel_read_safe": True}


if __name__ == "__main__":  # Doxygen's INPUT_FILTER: the filtered header on stdout
    with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        sys.stdout.write(filter_header(f.read()))
