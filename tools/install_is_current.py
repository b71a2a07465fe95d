"""Exit 0 when the installed nanocuda is this source tree's last build, so scripts/test can skip pip.

pip builds in an isolated environment whose nanobind lives in a new temporary folder each time,
so every `pip install .` recompiles the whole extension. After the README's `pip install .`,
scripts/test asks this first. Current means: the installed extension is byte-identical to
build/<tag>'s, no input of the build (C++ sources, headers, CMake files, pyproject.toml,
examples) changed after it was built, and every file of python/nanocuda is installed with the
same content. Otherwise it prints why and exits 1. `--requirements EXTRA...` prints the
requirements of pyproject's extras, for installing them without a build. Needs no GPU (imports nanocuda's location only).
"""

from __future__ import annotations

import filecmp
import importlib.util
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
# What the extension's build reads, besides python/nanocuda (compared by content).
BUILD_INPUTS = ("src", "include", "python/ext", "cmake", "CMakeLists.txt", "pyproject.toml", "examples")


def tree_files(*paths: str) -> list[pathlib.Path]:
    """Tracked and untracked-but-not-ignored files under `paths` (what pip copies)."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *paths],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / line for line in out.splitlines() if (ROOT / line).is_file()]


def why_not_current() -> str:
    spec = importlib.util.find_spec("nanocuda")
    if spec is None or spec.origin is None:
        return "nanocuda is not installed"
    installed = pathlib.Path(spec.origin).parent
    if installed.resolve().is_relative_to(ROOT):
        return f"nanocuda is imported from the source tree ({installed})"
    extensions = sorted(installed.glob("_nanocuda.*.so"))
    if not extensions:
        return "the installed nanocuda has no extension"
    built = sorted(ROOT.glob(f"build/*/python/ext/{extensions[0].name}"))
    match = [b for b in built if filecmp.cmp(b, extensions[0], shallow=False)]
    if not match:
        return "the installed extension is not the one in build/"
    built_at = match[0].stat().st_mtime
    for f in tree_files(*BUILD_INPUTS):
        if f.stat().st_mtime > built_at:
            return f"{f.relative_to(ROOT)} changed after the last build"
    package = ROOT / "python" / "nanocuda"
    for f in tree_files("python/nanocuda"):
        copy = installed / f.relative_to(package)
        if not copy.is_file() or not filecmp.cmp(f, copy, shallow=False):
            return f"{f.relative_to(ROOT)} differs from the installed copy"
    return ""


def extra_requirements(extra: str) -> list[str]:
    """pyproject.toml's optional dependencies `extra` (what `pip install ".[extra]"` adds)."""
    import tomllib  # Python 3.11+; scripts/test falls back to a full install without it

    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["optional-dependencies"][extra]


def main() -> int:
    if sys.argv[1:2] == ["--requirements"]:  # --requirements test nvrtc: one per line
        print("\n".join(r for extra in sys.argv[2:] for r in extra_requirements(extra)))
        return 0
    try:
        reason = why_not_current()
    except (OSError, subprocess.CalledProcessError) as e:  # no git, unreadable files: reinstall
        reason = f"cannot tell ({e})"
    print(reason or "the installed nanocuda is this tree's last build")
    return 1 if reason else 0


if __name__ == "__main__":
    sys.exit(main())
