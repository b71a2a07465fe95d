"""Property tests (Hypothesis) for compile options: every ProgramOptions field and cuda.core
option name given random values of random types is either accepted (and then yields flags,
and for a sample a compile or a CompileError) or refused with a TypeError/ValueError that
names the option; never a crash, a bad_cast, nanobind's signature dump or Python's own text."""

import re

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="property tests need hypothesis (pip install hypothesis)")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import nanocuda  # noqa: E402
from nanocuda import Program, ProgramOptions  # noqa: E402

SRC = 'extern "C" __global__ void k(float* x) { x[0] = 1.0f; }'
OWN = ["std", "defines", "include_dirs", "fast_math", "lineinfo", "debug", "max_registers",
       "relocatable_device_code", "default_device", "extra_flags"]
# cuda.core names, minus those that pass text to NVRTC verbatim or write files (pch, time
# traces) where a random value is a valid request with side effects.
SIDE_EFFECTS = {"name", "arch", "create_pch", "use_pch", "pch_dir", "fdevice_time_trace", "time",
                "optimization_info", "pre_include", "extra_sources", "ptxas_options"}
NAMES = OWN + [n for n in ProgramOptions.option_names() if n not in SIDE_EFFECTS]

VALUES = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=-3, max_value=300),
    st.floats(allow_nan=True),
    st.text(max_size=12), st.binary(max_size=8),
    st.lists(st.one_of(st.text(alphabet="ABCDEFGH_=0123456789", min_size=1, max_size=6), st.integers(-5, 5)), max_size=3),
    st.tuples(st.text(alphabet="ABC", min_size=1, max_size=3), st.integers(0, 9)),
    st.dictionaries(st.text(alphabet="ABC", min_size=1, max_size=3), st.one_of(st.none(), st.integers(0, 9)), max_size=2),
    st.just(object()), st.just(1j),
)

LEAKS = ("bad_cast", "incompatible function arguments", "object is not iterable", "has no attribute",
         "Unable to cast")


def _check_refusal(e: Exception, name: str) -> None:
    msg = str(e)
    assert not any(leak in msg for leak in LEAKS), msg
    assert msg.startswith("ProgramOptions"), msg
    # The option is named: an alias may be reported by the other spelling of the same field
    # (max_registers / max_register_count, defines / define_macro, include_dirs / include_path;
    # the NUL-byte rule is checked on the field, after a cuda.core name has set it).
    aliases = {"max_registers": "max_register", "defines": "define", "include_dirs": "include",
               "define_macro": "define", "include_path": "include"}
    assert aliases.get(name, name) in msg, msg


@settings(max_examples=1500, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(NAMES), value=VALUES)
def test_option_values_are_accepted_or_refused_clearly(name, value):
    try:
        opts = ProgramOptions(arch="sm_90a", **{name: value})
    except (TypeError, ValueError) as e:
        _check_refusal(e, name)
        return
    # Accepted: the flags can be formed (the rule is checked once, not again at compile).
    try:
        flags = Program(SRC, opts).flags("cubin")
    except (TypeError, ValueError) as e:  # a value only the flag spelling can judge
        _check_refusal(e, name)
        return
    assert all(isinstance(f, str) and "\0" not in f for f in flags)


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
# No split_compile here: NVRTC 13's split-compile thread pool hung nvrtcCompileProgram twice on
# this 2-core machine (main thread waiting on NVRTC's condition variable, no worker left); its
# values are still checked without compiling by the test above.
@given(name=st.sampled_from(["max_registers", "max_register_count", "defines",
                             "fast_math", "debug", "lineinfo", "std", "ftz", "prec_div", "diag_suppress"]),
       value=VALUES)
def test_accepted_options_compile_or_raise_compile_error(name, value):
    """A sample goes all the way through NVRTC: an accepted value compiles, or NVRTC's
    refusal comes back as CompileError with the flags; never a crash."""
    try:
        nanocuda.nvrtc_version()
    except Exception:
        pytest.skip("needs NVRTC")
    try:
        opts = ProgramOptions(arch="sm_90a", **{name: value})
    except (TypeError, ValueError) as e:
        _check_refusal(e, name)
        return
    try:
        code = Program(SRC, opts).compile("cubin")
    except nanocuda.CompileError as e:
        assert str(e)
        return
    assert code.code[:4] == b"\x7fELF"


@settings(max_examples=300, deadline=None, database=None)
@given(n=st.integers(min_value=-(2**40), max_value=2**40))
def test_max_registers_range_is_exact(n):
    if 0 <= n <= 255:
        assert ProgramOptions(max_registers=n).max_registers == n
    else:
        with pytest.raises(ValueError, match=re.escape(f"= {n} is out of range: 0")):
            ProgramOptions(max_registers=n)


@settings(max_examples=300, deadline=None, database=None)
@given(text=st.text(max_size=40))
def test_sources_with_nul_are_refused_at_construction(text):
    src = SRC + text
    if "\0" in src:
        with pytest.raises(ValueError, match=r"NUL byte at offset \d+"):
            Program(src, ProgramOptions(arch="sm_90a"))
    else:
        assert Program(src, ProgramOptions(arch="sm_90a")).source == src
