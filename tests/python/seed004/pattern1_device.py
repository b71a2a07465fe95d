from nanocuda import Device

# Get a Device handle (does NOT initialize the GPU yet)
dev = Device()       # Current device, or device 0 if no context exists
dev = Device(0)      # Explicit device ordinal
dev = Device(dev)    # Idempotent: returns the same object

# These are the SAME object (singleton pattern)
assert Device(0) is Device(0)

dev = Device()
dev.set_current()  # NOW the GPU is initialized (primary context activated)

# These require set_current() to have been called first
s = dev.create_stream()       # Create a CUDA stream
e = dev.create_event()        # Create a CUDA event  
buf = dev.allocate(1024)      # Allocate 1KB device memory
dev.sync()                    # Synchronize device (blocks until ALL streams complete)

dev.device_id           # int: ordinal (0, 1, 2, ...)
dev.name                # str: e.g., "NVIDIA GeForce RTX 4090"
dev.uuid                # str: unique identifier (cached after first access)
dev.compute_capability  # namedtuple: (major=8, minor=9)
dev.arch                # str: e.g., "89" for compute capability 8.9
dev.properties          # DeviceProperties: extensive hardware attributes

props = dev.properties
props.multiprocessor_count          # Number of SMs
props.max_threads_per_block         # 1024 for modern GPUs
props.max_shared_memory_per_block   # Shared memory limit
props.warp_size                     # 32
props.compute_capability_major      # e.g., 8
props.compute_capability_minor      # e.g., 9
# ... and many more
