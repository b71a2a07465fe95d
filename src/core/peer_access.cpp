// Peer access between devices, peer copies and the shared device check.
#include "nanocuda/core/peer_access.h"

#include <string>

#include "nanocuda/core/stream.h"
#include "nanocuda/driver/check.h"

namespace nanocuda {

namespace {
std::string pair(const Device& a, const Device& b) {
  return "device " + std::to_string(a.ordinal()) + " -> device " + std::to_string(b.ordinal());
}
}  // namespace

bool can_access_peer(const Device& device, const Device& peer) {
  if (device.ordinal() == peer.ordinal()) return false;
  int can = 0;
  NANOCUDA_CALL(cuDeviceCanAccessPeer, [&] { return pair(device, peer); }, &can, device.handle(), peer.handle());
  return can != 0;
}

void enable_peer_access(const Device& device, const Device& peer) {
  if (device.ordinal() == peer.ordinal())
    throw ValueError("nanocuda::enable_peer_access", "device " + std::to_string(device.ordinal()) +
                     " is the same device; a device always reaches its own memory");
  if (!can_access_peer(device, peer))
    throw ValueError("nanocuda::enable_peer_access", pair(device, peer) +
                     ": the hardware has no peer path (cuDeviceCanAccessPeer is 0); copies still "
                     "work through nanocuda::copy, staged by the driver");
  CurrentContext guard(*device.context());
  CUresult rc = detail::driver().cuCtxEnablePeerAccess(peer.context()->handle(), 0);
  if (rc == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) return;  // idempotent
  detail::check(rc, "cuCtxEnablePeerAccess", [&] { return pair(device, peer); });
}

void disable_peer_access(const Device& device, const Device& peer) {
  if (device.ordinal() == peer.ordinal())
    throw ValueError("nanocuda::disable_peer_access", "device " + std::to_string(device.ordinal()) +
                     " is the same device");
  CurrentContext guard(*device.context());
  CUresult rc = detail::driver().cuCtxDisablePeerAccess(peer.context()->handle());
  if (rc == CUDA_ERROR_PEER_ACCESS_NOT_ENABLED) return;  // idempotent
  detail::check(rc, "cuCtxDisablePeerAccess", [&] { return pair(device, peer); });
}

void copy_peer_async(CUdeviceptr dst, const Device& dst_device, CUdeviceptr src, const Device& src_device,
                     std::size_t size, StreamRef stream) {
  CurrentContext guard(stream.context());
  NANOCUDA_CALL(cuMemcpyPeerAsync,
                [&] { return std::to_string(size) + " bytes, " + pair(src_device, dst_device) + " on " + stream.describe(); },
                dst, dst_device.context()->handle(), src, src_device.context()->handle(), size, stream.handle());
}

void check_same_device(std::string_view call, std::string_view what, int ordinal, std::string_view expected_what,
                       int expected_ordinal) {
  if (ordinal == expected_ordinal) return;
  throw ValueError(std::string(call), std::string(what) + " is on device " + std::to_string(ordinal) +
                   " but " + std::string(expected_what) + " is on device " + std::to_string(expected_ordinal));
}

}  // namespace nanocuda
