"""More of test_bad_inputs.py's catalogue (issue 25): raw frees of a live Buffer's address and
ints, flags and sequences on the memory and device surfaces. Plain tuples (id, code, exception,
message pattern, runs on the runtime driver), made into Cases by test_bad_inputs.py."""

T, V = "TypeError", "ValueError"

CASES = [
    # --- raw frees: an address of a live Buffer is refused, a Buffer or a freed address is fine ---
    ("mr-deallocate-live-ptr", "mr = dev.memory_resource; b = mr.allocate(4096, s); mr.deallocate(b.ptr, 4096)", V,
         r"MemoryResource.deallocate\(0x[0-9a-f]+, \.\.\.\): that address belongs to a live Buffer\(4096 bytes.*close the Buffer instead", True),
    ("mr-deallocate-live-handle-inside", "mr = dev.memory_resource; b = mr.allocate(4096, s); mr.deallocate(b.handle + 64, 64)", V,
         r"that address belongs to a live Buffer", True),
    ("mr-deallocate-live-cai", "mr = dev.memory_resource; b = dev.allocate(256, s); mr.deallocate(b.__cuda_array_interface__['data'][0], 256)", V,
         r"that address belongs to a live Buffer", True),
    ("mr-deallocate-live-dmr", "mr = nanocuda.DeviceMemoryResource(0, nanocuda.DeviceMemoryResourceOptions()); b = mr.allocate(64, s); mr.deallocate(b.ptr, 64, s)", V,
         r"that address belongs to a live Buffer", True),
    ("mr-deallocate-str", "dev.memory_resource.deallocate('0x10', 16)", T, r"MemoryResource.deallocate: buffer must be a nanocuda.Buffer or an int address, got str", True),
    ("mr-deallocate-negative", "dev.memory_resource.deallocate(-16, 16)", V, r"MemoryResource.deallocate: the address must be >= 0", True),
    ("mr-deallocate-size-negative", "dev.memory_resource.deallocate(0x10000, -1)", V, r"MemoryResource.deallocate: size must be >= 0", True),
    ("mr-deallocate-twice", "mr = dev.memory_resource; b = mr.allocate(64, s); mr.deallocate(b); mr.deallocate(b)", V, r"was already freed", True),
    # --- more of the same classes: ints, flags and sequences named by the call ---
    ("device-attribute-str", "dev.attribute('x')", T, r"Device.attribute: attribute \(a CUdevice_attribute number\) must be an int, got str", True),
    ("device-attribute-negative", "dev.attribute(-1)", V, r"Device.attribute: attribute .* must be in \[1, ", True),
    # the DLPack protocol's own wording (cuda.core's consumers match on it)
    ("dlpack-max-version-str", "buf.__dlpack__(max_version='x')", "BufferError", r"^Expected max_version tuple\[int, int\], got 'x'$", True),
    ("dlpack-max-version-short", "buf.__dlpack__(max_version=(1,))", "BufferError", r"^Expected max_version tuple\[int, int\], got \(1,\)$", True),
    ("dlpack-copy-str", "buf.__dlpack__(copy='no')", T, r"Buffer.__dlpack__: copy \(True, False or None\) must be a bool, got str", True),
    ("peer-accessible-int", "nanocuda.DeviceMemoryResource(0).peer_accessible_by = 5", T, r"peer_accessible_by: assign a list of devices .*got int", True),
    ("peer-accessible-str", "nanocuda.DeviceMemoryResource(0).peer_accessible_by = '0'", T, r"peer_accessible_by: assign a list", True),
    ("dmr-options-ipc-str", "nanocuda.DeviceMemoryResourceOptions(ipc_enabled='yes')", T, r"DeviceMemoryResourceOptions: ipc_enabled must be a bool, got str", False),
    ("dmr-options-ipc-int", "nanocuda.DeviceMemoryResourceOptions(ipc_enabled=1)", T, r"ipc_enabled must be a bool, got int", False),
]
