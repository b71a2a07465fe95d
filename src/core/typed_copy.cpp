// The checked byte copies behind the typed host <-> Buffer copies of typed_copy.h.
#include "nanocuda/core/typed_copy.h"

#include <string>

#include "nanocuda/core/copy.h"
#include "nanocuda/driver/error.h"

namespace nanocuda::detail {

namespace {

std::string elements(std::size_t bytes, std::size_t element_size) {
  return std::to_string(bytes / element_size) + " element" + (bytes / element_size == 1 ? "" : "s") + " of " +
         std::to_string(element_size) + " byte" + (element_size == 1 ? "" : "s");
}

void check_open(const Buffer& b, const char* call) {
  if (b.is_closed()) throw ValueError(std::string(call) + ": the Buffer is closed");
}

void check_sizes(const Buffer& b, std::size_t bytes, std::size_t element_size, const char* call) {
  check_open(b, call);
  if (bytes != b.size())
    throw ValueError(std::string(call) + ": the host range has " + std::to_string(bytes) + " bytes (" +
                     elements(bytes, element_size) + ") but the Buffer has " + std::to_string(b.size()) +
                     "; the sizes must match (copy part of a Buffer with copy_async(CUdeviceptr, ...))");
}

}  // namespace

void copy_host_to_buffer(Buffer& dst, const void* src, std::size_t bytes, std::size_t element_size,
                         StreamRef stream, const char* call) {
  check_sizes(dst, bytes, element_size, call);
  if (bytes == 0) return;
  copy_async(dst.ptr(), reinterpret_cast<CUdeviceptr>(src), bytes, stream);
}

void copy_buffer_to_host(void* dst, std::size_t bytes, std::size_t element_size, const Buffer& src,
                         StreamRef stream, const char* call) {
  check_sizes(src, bytes, element_size, call);
  if (bytes == 0) return;
  copy_async(reinterpret_cast<CUdeviceptr>(dst), src.ptr(), bytes, stream);
}

void check_whole_elements(const Buffer& src, std::size_t element_size, const char* call) {
  check_open(src, call);
  if (src.size() % element_size != 0)
    throw ValueError(std::string(call) + ": the Buffer's " + std::to_string(src.size()) +
                     " bytes are not a whole number of " + std::to_string(element_size) + "-byte elements");
}

}  // namespace nanocuda::detail
