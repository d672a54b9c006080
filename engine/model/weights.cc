#include "engine/model/weights.h"

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

size_t TensorView::quant_bytes() const {
  if (!quantized || !present() || shape.empty()) return 0;
  const numerics::QuantLayout& l = numerics::LayoutOf(quant_type);
  return static_cast<size_t>(elements() / l.block_elements) * static_cast<size_t>(l.block_bytes);
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

}  // namespace samebits::model
