#include "engine/model/weights.h"

#include <stdexcept>

#include "engine/numerics/byte_order.h"
#include "engine/numerics/half.h"

namespace samebits::model {

int64_t TensorView::elements() const {
  if (!present()) return 0;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

size_t TensorView::bytes() const {
  return static_cast<size_t>(elements()) * static_cast<size_t>(numerics::DTypeSize(dtype));
}

float TensorView::At(int64_t i) const {
  switch (dtype) {
    case DType::kF32:
      return reinterpret_cast<const float*>(data)[i];
    case DType::kF16:
      return numerics::ToFloat(reinterpret_cast<const numerics::F16*>(data)[i]);
    case DType::kBF16:
      return numerics::ToFloat(reinterpret_cast<const numerics::BF16*>(data)[i]);
  }
  return 0.0f;
}

std::span<const std::byte> LittleEndianBytes(const TensorView& view,
                                             std::vector<std::byte>& scratch) {
  if constexpr (numerics::kLittleEndianHost) return {view.data, view.bytes()};
  scratch.assign(view.data, view.data + view.bytes());
  if (!numerics::SwapLittleEndianInPlace(scratch, view.dtype)) {
    throw std::runtime_error(std::string("a ") + numerics::DTypeName(view.dtype) +
                             " tensor cannot be reordered to little-endian on this host");
  }
  return scratch;
}

}  // namespace samebits::model
