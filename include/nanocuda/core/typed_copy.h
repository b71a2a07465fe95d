// Typed copies between host ranges (std::vector, std::span, std::array) and Buffers.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <ranges>
#include <span>
#include <type_traits>
#include <vector>

#include "nanocuda/core/buffer.h"
#include "nanocuda/core/stream_ref.h"

namespace nanocuda {

// A host range whose elements can be copied as bytes: std::vector<T>, std::span<T>,
// std::array<T, N>, C arrays.
template <class R>
concept HostRange = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
                    std::is_trivially_copyable_v<std::ranges::range_value_t<R>>;

namespace detail {
// The checked, untyped copies the templates below reduce to (src/core/typed_copy.cpp).
// `call` names the C++ function in errors; sizes must match exactly.
void copy_host_to_buffer(Buffer& dst, const void* src, std::size_t bytes, std::size_t element_size,
                         StreamRef stream, const char* call);
void copy_buffer_to_host(void* dst, std::size_t bytes, std::size_t element_size, const Buffer& src,
                         StreamRef stream, const char* call);
// ValueError unless `src` is open and its size a whole number of `element_size` elements.
void check_whole_elements(const Buffer& src, std::size_t element_size, const char* call);
}  // namespace detail

// Copies all of `src` into `dst` in the order of `stream`; ValueError unless `src` holds
// exactly dst.size() bytes. Pageable host memory is read before the call returns; pinned
// memory must stay alive until `stream` reaches the copy.
template <HostRange R>
void copy_async(Buffer& dst, const R& src, StreamRef stream) {
  using T = std::ranges::range_value_t<R>;
  detail::copy_host_to_buffer(dst, std::ranges::data(src), std::ranges::size(src) * sizeof(T), sizeof(T),
                              stream, "nanocuda::copy_async(Buffer&, host range, Stream)");
}

// Copies all of `src` into the host range `dst` in the order of `stream`; ValueError unless
// `dst` holds exactly src.size() bytes. `dst` is complete once `stream` reaches the copy
// (at once for pageable memory; call stream.sync() before reading pinned memory).
template <HostRange R>
  requires(!std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>>)
void copy_async(R&& dst, const Buffer& src, StreamRef stream) {
  using T = std::ranges::range_value_t<R>;
  detail::copy_buffer_to_host(std::ranges::data(dst), std::ranges::size(dst) * sizeof(T), sizeof(T), src,
                              stream, "nanocuda::copy_async(host range, const Buffer&, Stream)");
}

// A new Buffer (from the stream's device's memory resource, as Buffer(size, stream)) holding
// a copy of `src`, in the order of `stream`.
template <HostRange R>
[[nodiscard]] Buffer to_buffer(const R& src, StreamRef stream) {
  using T = std::ranges::range_value_t<R>;
  Buffer out(std::ranges::size(src) * sizeof(T), stream);
  detail::copy_host_to_buffer(out, std::ranges::data(src), out.size(), sizeof(T), stream,
                              "nanocuda::to_buffer(host range, Stream)");
  return out;
}

// The contents of `src` as a std::vector<T>, after `stream` has reached the copy (it waits);
// ValueError unless src.size() is a whole number of T.
template <class T>
  requires std::is_trivially_copyable_v<T>
[[nodiscard]] std::vector<T> to_vector(const Buffer& src, StreamRef stream) {
  detail::check_whole_elements(src, sizeof(T), "nanocuda::to_vector<T>(Buffer, Stream)");
  std::vector<T> out(src.size() / sizeof(T));
  detail::copy_buffer_to_host(out.data(), out.size() * sizeof(T), sizeof(T), src, stream,
                              "nanocuda::to_vector<T>(Buffer, Stream)");
  stream.sync();
  return out;
}

}  // namespace nanocuda
