#include "engine/numerics/byte_order.h"

#include <algorithm>

namespace samebits::numerics {

int ByteOrderUnit(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kF16:
    case DType::kBF16:
      return 2;
  }
  return 0;
}

void ReverseEachElement(std::span<std::byte> bytes, int unit) {
  if (unit <= 1) return;
  const size_t n = static_cast<size_t>(unit);
  for (size_t at = 0; at + n <= bytes.size(); at += n) {
    std::reverse(bytes.begin() + at, bytes.begin() + at + n);
  }
}

bool SwapLittleEndianInPlace(std::span<std::byte> bytes, DType dtype) {
  if constexpr (kLittleEndianHost) return true;
  const int unit = ByteOrderUnit(dtype);
  if (unit == 0) return false;
  ReverseEachElement(bytes, unit);
  return true;
}

}  // namespace samebits::numerics
