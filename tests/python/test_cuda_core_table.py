"""docs/cuda-core.md: the count lines match the rows, and compile-area rows marked "same" are real."""

import importlib.util
import pathlib
import re

import nanocuda

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLE = ROOT / "docs" / "cuda-core.md"


def rows():
    out = []
    for line in TABLE.read_text().splitlines():
        m = re.match(r"^\| `([^`]+)` \| (.+) \|$", line)
        if m:
            out.append((m.group(1), m.group(2)))
    return out


def present(status: str) -> bool:
    return status.startswith("same in nanocuda") or status.startswith("nanocuda's name:")


def generator():
    spec = importlib.util.spec_from_file_location("gen_cuda_core_table", ROOT / "tools" / "gen_cuda_core_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_row_has_a_status():
    table = rows()
    assert len(table) > 1000
    for name, status in table:
        assert present(status) or status.startswith("missing: "), (name, status)
        assert status != "missing: ", name
    names = [n for n, _ in table]
    assert len(names) == len(set(names)), "a name is listed twice"


def test_count_lines_match_the_rows():
    text = TABLE.read_text()
    table = rows()
    total = re.search(r"^(\d+) of (\d+) public names present \(([\d.]+)%\)\.$", text, re.M)
    assert total, "the overall count line is missing"
    assert int(total.group(1)) == sum(present(s) for _, s in table)
    assert int(total.group(2)) == len(table)
    scoped = re.search(r"^In the areas nanocuda covers: (\d+) of (\d+) present \(([\d.]+)%\)\.$", text, re.M)
    assert scoped, "the covered-areas count line is missing"
    in_scope = [(n, s) for n, s in table if generator().in_issue_scope(n)]
    assert int(scoped.group(1)) == sum(present(s) for _, s in in_scope)
    assert int(scoped.group(2)) == len(in_scope)


def test_compile_rows_marked_same_exist_in_nanocuda():
    owners = {"Program", "ProgramOptions", "ObjectCode", "Linker", "LinkerOptions", "Kernel",
              "KernelAttributes", "KernelOccupancy"}
    checked = 0
    for name, status in rows():
        parts = name.split(".")
        if parts[0] not in owners or not status.startswith("same in nanocuda"):
            continue
        cls = getattr(nanocuda, parts[0])
        if len(parts) == 2:
            if parts[0] in ("ProgramOptions", "LinkerOptions"):
                assert parts[1] in cls.option_names() or hasattr(cls, parts[1]), name
            else:
                assert hasattr(cls, parts[1]), name
        checked += 1
    assert checked > 100


def test_readme_links_the_table_and_shows_the_switch():
    readme = (ROOT / "README.md").read_text()
    assert "docs/cuda-core.md" in readme
    assert "from cuda.core.experimental import" in readme and "from nanocuda import" in readme


def test_private_module_tests_are_listed_with_reasons():
    """Issue 23: every conformance test that checks cuda.core's private modules or packaging is
    listed in docs/cuda-core.md with its reason, as the generator writes that section."""
    gen = generator()
    section = "\n".join(gen.private_tests_section())
    assert section.strip() in TABLE.read_text(), "rerun tools/gen_cuda_core_table.py --private-only"
    groups = importlib.util.module_from_spec(
        importlib.util.spec_from_file_location("p", ROOT / "tools" / "cuda_core_private_tests.py"))
    groups.__spec__.loader.exec_module(groups)
    ids = [t for tests in groups.PRIVATE_TESTS.values() for t in tests]
    assert len(ids) == len(set(ids)) and len(ids) > 100
    assert all(re.fullmatch(r"[\w/]+\.py::[\w:\[\]-]+", t) for t in ids)
    assert all(reason.strip() for reason in groups.PRIVATE_TESTS)
    # The launcher rows that monkeypatch cuda.core._launch_config are among them.
    assert "test_launcher.py::test_launch_config_cluster_accepts_hopper_cc" in ids
