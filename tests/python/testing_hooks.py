"""`hooks`: _nanocuda._testing, the test-only hooks; a test that reaches for one skips where the build left them out (a wheel)."""

import os

import pytest

SKIP_REASON = "needs the test hooks (_nanocuda._testing; wheels are built without them)"


def testing_module():
    """_nanocuda._testing, or None where the build left it out (NANOCUDA_TEST_HOOKS=OFF)."""
    from nanocuda import _nanocuda

    testing = getattr(_nanocuda, "_testing", None)
    # scripts/test builds with the hooks (the CMake default): missing there is a failure.
    if testing is None and os.environ.get("NANOCUDA_REQUIRE_TEST_HOOKS") == "1":
        raise AssertionError("NANOCUDA_REQUIRE_TEST_HOOKS=1 but nanocuda was built without "
                             "_nanocuda._testing (NANOCUDA_TEST_HOOKS=OFF)")
    return testing


class _Hooks:
    """Looks each hook up on use, so modules import cleanly and only the tests needing hooks skip."""

    def __getattr__(self, name: str):
        testing = testing_module()
        if testing is None:
            pytest.skip(SKIP_REASON)
        return getattr(testing, name)


hooks = _Hooks()


def pack(layout, name, *args):
    """The bytes the launch path packs for `args` against `layout` (the pack_args hook)."""
    return hooks.pack_args(layout, name, *args)
