// Checked writes of launch arguments at the offsets the driver reported.
#include "nanocuda/launch/param_packer.h"

#include <limits>
#include <string>

#include "nanocuda/driver/error.h"

namespace nanocuda {

ParamPacker::ParamPacker(const ParamLayout& layout, std::string_view kernel_name,
                         unsigned char* storage, void** pointers) noexcept
    : layout_(layout),
      params_(layout.params.data()),
      kernel_name_(kernel_name),
      storage_(storage),
      pointers_(pointers) {
  for (std::size_t i = 0; i < layout.count(); ++i) pointers_[i] = slot(i);
}

void ParamPacker::check_count(std::size_t given) const {
  if (given != layout_.count())
    throw TypeError("kernel '" + std::string(kernel_name_) + "' takes " +
                    std::to_string(layout_.count()) + " argument" +
                    (layout_.count() == 1 ? "" : "s") + ", got " + std::to_string(given));
}

void ParamPacker::size_mismatch(std::size_t index, std::size_t given, const char* what) const {
  throw ValueError("kernel '" + std::string(kernel_name_) + "', parameter " +
                   std::to_string(index) + ": expects " + std::to_string(size_of(index)) +
                   " bytes, got " + std::to_string(given) + " bytes (" + what + ")");
}

void ParamPacker::write_int_checked(std::size_t index, std::int64_t value) {
  switch (size_of(index)) {
    case 8: std::memcpy(slot(index), &value, 8); return;
    case 4:
      if (value < std::numeric_limits<std::int32_t>::min() ||
          value > static_cast<std::int64_t>(std::numeric_limits<std::uint32_t>::max()))
        break;
      {
        auto v = static_cast<std::uint32_t>(value);
        std::memcpy(slot(index), &v, 4);
      }
      return;
    case 2:
      if (value < std::numeric_limits<std::int16_t>::min() || value > 0xFFFF) break;
      {
        auto v = static_cast<std::uint16_t>(value);
        std::memcpy(slot(index), &v, 2);
      }
      return;
    case 1:
      if (value < -128 || value > 255) break;
      *slot(index) = static_cast<unsigned char>(value);
      return;
    default: size_mismatch(index, 8, "int");
  }
  throw ValueError("kernel '" + std::string(kernel_name_) + "', parameter " +
                   std::to_string(index) + ": int " + std::to_string(value) +
                   " does not fit in " + std::to_string(size_of(index)) + " bytes");
}

void ParamPacker::write_uint(std::size_t index, std::uint64_t value) {
  if (value <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    write_int(index, static_cast<std::int64_t>(value));
    return;
  }
  if (size_of(index) != 8)
    throw ValueError("kernel '" + std::string(kernel_name_) + "', parameter " +
                     std::to_string(index) + ": int " + std::to_string(value) +
                     " does not fit in " + std::to_string(size_of(index)) + " bytes");
  std::memcpy(slot(index), &value, 8);
}

void ParamPacker::write_bool(std::size_t index, bool value) {
  if (size_of(index) != 1) size_mismatch(index, 1, "bool");
  *slot(index) = value ? 1 : 0;
}

void ParamPacker::write_bytes(std::size_t index, const void* data, std::size_t size,
                              const char* what) {
  if (size != size_of(index)) size_mismatch(index, size, what);
  std::memcpy(slot(index), data, size);
}

}  // namespace nanocuda
