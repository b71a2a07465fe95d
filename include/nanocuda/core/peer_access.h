// Several GPUs: peer access between devices, peer copies, and the device checks calls share.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string_view>

#include "nanocuda/core/device.h"
#include "nanocuda/core/stream_ref.h"

namespace nanocuda {


// Whether `device`'s kernels can read `peer`'s memory directly (cuDeviceCanAccessPeer).
// False for the same device (it needs no peer access).
[[nodiscard]] bool can_access_peer(const Device& device, const Device& peer);
// Lets `device`'s context reach memory allocated in `peer`'s context. Idempotent; a
// ValueError naming both devices when the hardware cannot (or device == peer).
void enable_peer_access(const Device& device, const Device& peer);
// Undoes it; idempotent (nothing to do when it was not enabled).
void disable_peer_access(const Device& device, const Device& peer);
// Copies `size` bytes between memory of two devices (cuMemcpyPeerAsync), in the order of
// `stream`; works whether or not peer access is enabled (staged through the host if not).
void copy_peer_async(CUdeviceptr dst, const Device& dst_device, CUdeviceptr src,
                     const Device& src_device, std::size_t size, StreamRef stream);
// ValueError "`call`: `what` is on device N but `expected_what` is on device M" when the
// two ordinals differ. The one helper so every message reads the same.
void check_same_device(std::string_view call, std::string_view what, int ordinal,
                       std::string_view expected_what, int expected_ordinal);

}  // namespace nanocuda
