"""DeviceProperties and Device identity in cuda.core's types, on a real GPU."""

import re

import pytest

from nanocuda import Device

pytestmark = pytest.mark.gpu


def test_flags_are_bool_and_the_pci_bus_id_is_text():
    d = Device()
    p = d.properties
    assert p.concurrent_kernels is True and p.unified_addressing is True and p.managed_memory is True
    assert isinstance(p.gpu_overlap, bool) and isinstance(p.can_tex2d_gather, bool)
    assert p.maximum_texture1d_linear_width > 0 and p.maximum_texture2d_width >= 1024
    assert re.fullmatch(r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]", d.pci_bus_id), d.pci_bus_id
    assert int(d.pci_bus_id.split(":")[1], 16) == p.pci_bus_id
