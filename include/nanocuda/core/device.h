// A CUDA device: identity, compute capability, and every CUdevice_attribute as a method.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "nanocuda/core/context.h"

namespace nanocuda {

class Device {
 public:
  // The default device, as everywhere a device is left out (C++ and Python alike): the
  // current context's device on this thread, else device 0 (current_ordinal()).
  Device();
  // Device `ordinal`; loads the driver and checks the ordinal against count().
  explicit Device(int ordinal);
  // The default-device rule by name: the same as Device().
  [[nodiscard]] static Device current_or_default() { return Device(); }

  // Number of CUDA devices; throws DriverNotFoundError when there is no driver.
  [[nodiscard]] static int count();
  // The driver's CUDA version as major*1000 + minor*10 (e.g. 13000).
  [[nodiscard]] static int driver_version();
  // The ordinal of the current context's device on this thread; 0 when no context is current.
  [[nodiscard]] static int current_ordinal();

  [[nodiscard]] int ordinal() const noexcept { return ordinal_; }
  [[nodiscard]] CUdevice handle() const noexcept { return handle_; }
  [[nodiscard]] std::string name() const;
  [[nodiscard]] std::array<unsigned char, 16> uuid() const;
  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it (and NVML takes it);
  // without the "GPU-" prefix when nvidia_smi_prefix is false (cuda.core's Device.uuid).
  [[nodiscard]] std::string uuid_string(bool nvidia_smi_prefix = true) const;
  // "0000:00:06.0" (domain:bus:device.function), as cuda.core's Device.pci_bus_id gives it.
  [[nodiscard]] std::string pci_bus_id_text() const;
  [[nodiscard]] std::pair<int, int> compute_capability() const;
  // major*10 + minor as text, "90" for 9.0, "86" for 8.6 (cuda.core's Device.arch).
  [[nodiscard]] std::string arch() const;
  // The NVRTC/nvcc target suffix nanocuda compiles for by default: "90a" for 9.0
  // (arch-specific features on sm_90 and later), "86" for 8.6.
  [[nodiscard]] std::string target_arch() const;
  [[nodiscard]] std::size_t total_memory() const;
  // (free, total) bytes, from cuMemGetInfo in this device's context.
  [[nodiscard]] std::pair<std::size_t, std::size_t> memory_info() const;

  [[nodiscard]] int attribute(CUdevice_attribute attr) const;
  // One accessor per attribute, generated from the table: max_threads_per_block(), ...
#define X(enum_name, value, snake_name, doc) \
  [[nodiscard]] int snake_name() const { return attribute(enum_name); }
#include "nanocuda/core/device_attributes.inc"
#undef X

  // The device's primary context, retained on first use.
  [[nodiscard]] const std::shared_ptr<Context>& context() const;
  // Makes the primary context current on this thread (and leaves it current).
  void set_current() const;
  // cuda.core's set_current(ctx): pops this thread's current context and pushes `ctx`, a
  // context of this device (a green one, or the primary). Returns the popped context, or
  // nullopt when none was current. ValueError for another device's or a closed context.
  [[nodiscard]] std::optional<Context> push_context(const Context& ctx) const;
  // Waits for all work on the device (cuCtxSynchronize in its primary context).
  void sync() const;

  bool operator==(const Device& other) const noexcept { return ordinal_ == other.ordinal_; }

 private:
  int ordinal_ = 0;
  CUdevice handle_ = 0;
  mutable std::shared_ptr<Context> context_;
};

// The name, value and doc of every device attribute, for tables and bindings.
struct DeviceAttributeInfo {
  CUdevice_attribute attribute;
  const char* name;  // snake_case, as the accessor is named
  const char* doc;
  bool is_flag;  // a yes/no answer (0 or 1): a bool in cuda.core's DeviceProperties
};
[[nodiscard]] const DeviceAttributeInfo* device_attributes(std::size_t* count) noexcept;

}  // namespace nanocuda
