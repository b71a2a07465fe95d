"""The extension exports its module entry point and nothing from the static archives it links
(nanocuda's library, or a libstdc++ some toolchains link statically): a libstdc++ exported
from here bound its locale facet ids process-wide and crashed torch/CuPy imported later."""
import shutil
import subprocess
import sys

import pytest

import nanocuda._nanocuda as ext


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF dynamic symbols: Linux only")
def test_extension_exports_no_static_archive_symbols():
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) is not installed")
    out = subprocess.run([nm, "-D", "--defined-only", ext.__file__], capture_output=True, text=True,
                         check=True).stdout
    rows = [line.split() for line in out.splitlines() if len(line.split()) == 3]
    strong = [name for _, kind, name in rows if kind in "TDBR"]
    assert strong == ["PyInit__nanocuda"], f"exported beyond the module entry point: {strong[:5]}"
    # The symbols that crashed later imports: libstdc++'s locale and iostream state.
    runtime = [name for _, _, name in rows if any(k in name for k in ("locale", "ios_base", "5facet"))]
    assert not runtime, runtime[:5]
