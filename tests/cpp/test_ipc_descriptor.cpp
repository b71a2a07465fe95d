// IPC buffer descriptors from another process: the payload form (cuda.core's) and the byte
// form round-trip, and what is wrong in them is kept for the import to name, never guessed.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>
#include <utility>

#include "nanocuda/core/ipc_allocation_handle.h"
#include "nanocuda/core/ipc_buffer_descriptor.h"
#include "nanocuda/driver/error.h"

using nanocuda::IpcAllocationHandle;
using nanocuda::IpcBufferDescriptor;

namespace {
IpcBufferDescriptor sample() {
  IpcBufferDescriptor d;
  std::memset(&d.data, 0x42, sizeof d.data);
  d.size = 4096;
  for (std::size_t i = 0; i < d.pool_uuid.size(); ++i) d.pool_uuid[i] = static_cast<unsigned char>(i + 1);
  return d;
}
}  // namespace

TEST(IpcBufferDescriptor, PayloadCarriesTheExportDataThenThePoolUuid) {
  IpcBufferDescriptor d = sample();
  std::string payload = d.payload();
  ASSERT_EQ(payload.size(), sizeof(CUmemPoolPtrExportData) + 16);
  IpcBufferDescriptor back = IpcBufferDescriptor::from_payload(payload, d.size);
  EXPECT_EQ(back.to_bytes(), d.to_bytes());
  EXPECT_EQ(back.payload_length, payload.size());
}

TEST(IpcBufferDescriptor, ABarePayloadHasNoPoolUuid) {
  IpcBufferDescriptor d = sample();
  std::string bare = d.payload().substr(0, sizeof(CUmemPoolPtrExportData));
  IpcBufferDescriptor back = IpcBufferDescriptor::from_payload(bare, 64);
  EXPECT_EQ(back.pool_uuid, (std::array<unsigned char, 16>{}));
  EXPECT_EQ(std::memcmp(&back.data, &d.data, sizeof d.data), 0);
  EXPECT_EQ(back.size, 64u);
}

TEST(IpcBufferDescriptor, AShortPayloadIsKeptForTheImportToRefuse) {
  IpcBufferDescriptor d = IpcBufferDescriptor::from_payload(std::string(8, '\0'), 64);
  EXPECT_EQ(d.payload_length, 8u);  // Buffer.from_ipc_descriptor names the length
}

TEST(IpcBufferDescriptor, BytesFormRejectsGarbage) {
  EXPECT_THROW((void)IpcBufferDescriptor::from_bytes("garbage"), nanocuda::ValueError);
  EXPECT_EQ(IpcBufferDescriptor::from_bytes(sample().to_bytes()).size, 4096u);
}

TEST(IpcAllocationHandle, ClosesOnceAndMovesOwnership) {
  IpcAllocationHandle a(-1, {});
  EXPECT_TRUE(a.is_closed());
  EXPECT_THROW((void)a.fd(), nanocuda::ValueError);
  a.close();  // idempotent
  IpcAllocationHandle b(std::move(a));
  EXPECT_TRUE(b.is_closed());
}
