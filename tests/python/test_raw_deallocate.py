"""MemoryResource.deallocate with a raw address (issue 25): a live Buffer's address is refused
(its own close would free it twice); a Buffer, a freed address and a Python resource that
forwards its frees still work. On tools/mock_libcuda.c, each scenario in its own process."""

import os
import subprocess
import sys
import textwrap

PRELUDE = """
import nanocuda
dev = nanocuda.Device(0); s = nanocuda.Stream(); mr = dev.memory_resource
"""


def run(mock: str, body: str) -> str:
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock)
    out = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body) + "\nprint('ok')\n"],
                         capture_output=True, text=True, env=env, timeout=120, cwd="/tmp")
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stdout + out.stderr
    return out.stdout


def test_live_buffer_address_refused_then_close_frees_once(mock_libcuda):
    run(mock_libcuda, """
        b = mr.allocate(4096, s); p = b.ptr
        try:
            mr.deallocate(b.ptr, 4096, s)
        except ValueError as e:
            assert "close the Buffer instead" in str(e), e
        else:
            raise AssertionError("a live Buffer's address was freed raw")
        assert not b.is_closed  # the refusal left the Buffer as it was
        b.close()
        mr.deallocate(p, 4096, s)  # freed: no live Buffer holds it now
    """)


def test_buffer_argument_and_address_after_close(mock_libcuda):
    run(mock_libcuda, """
        b = mr.allocate(64, s); p = b.ptr
        mr.deallocate(b)  # the Buffer form closes it
        assert b.is_closed
        mr.deallocate(p, 64)  # now nothing live holds p: the caller's business
    """)


def test_forwarding_python_resource_is_not_refused(mock_libcuda):
    # A Python resource whose deallocate frees through another resource: the Buffer being
    # closed still reads as open during the call, but it belongs to the Python resource.
    run(mock_libcuda, """
        freed = []
        class Forward(nanocuda.MemoryResource):
            def allocate(self, size, stream=None): raise AssertionError
            def deallocate(self, ptr, size, stream=None):
                mr.deallocate(ptr, size, stream); freed.append(ptr)
            is_device_accessible = True
            is_host_accessible = False
            device_id = 0
        fw = Forward()
        b = nanocuda.Buffer.from_handle(0x20000, 64, mr=fw)
        assert b.ptr == 0x20000
        b.close()
        assert freed == [0x20000], freed
    """)


def test_many_address_reads_do_not_pin_or_refuse(mock_libcuda):
    # Reading ptr of thousands of short-lived Buffers: every one is still freed at close, and
    # a closed Buffer's address is never refused afterwards (entries are checked, then pruned).
    run(mock_libcuda, """
        for _ in range(5000):
            b = mr.allocate(64, s); p = b.ptr; b.close()
        mr.deallocate(p, 64)
    """)
