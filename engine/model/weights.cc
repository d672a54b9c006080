#include "engine/model/weights.h"

#include <cstring>
#include <stdexcept>
#include <string>

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
  if (quantized) return quant_bytes();
  return static_cast<size_t>(elements()) * static_cast<size_t>(numerics::DTypeSize(dtype));
}

size_t TensorView::quant_bytes() const {
  if (!quantized || !present() || shape.empty()) return 0;
  const numerics::QuantLayout& l = numerics::LayoutOf(quant_type);
  return static_cast<size_t>(elements() / l.block_elements) * static_cast<size_t>(l.block_bytes);
}

float TensorView::At(int64_t i) const {
  if (quantized) {
    const int64_t block = numerics::LayoutOf(quant_type).block_elements;
    float values[256];  // the largest block (k-quants' super-blocks)
    ReadF32(i / block * block, block, values);
    return values[i % block];
  }
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

void TensorView::ReadF32(int64_t offset, int64_t n, float* out) const {
  if (quantized) {
    const numerics::QuantLayout& l = numerics::LayoutOf(quant_type);
    if (offset % l.block_elements != 0 || n % l.block_elements != 0) {
      throw std::logic_error("ReadF32: elements [" + std::to_string(offset) + ", " +
                             std::to_string(offset + n) + ") do not cover whole " + l.name +
                             " blocks");
    }
    numerics::DequantizeRow(quant_type, data + offset / l.block_elements * l.block_bytes, n, out);
    return;
  }
  switch (dtype) {
    case DType::kF32:
      std::memcpy(out, reinterpret_cast<const float*>(data) + offset, sizeof(float) * n);
      return;
    case DType::kF16: {
      const auto* p = reinterpret_cast<const numerics::F16*>(data) + offset;
      for (int64_t i = 0; i < n; ++i) out[i] = numerics::ToFloat(p[i]);
      return;
    }
    case DType::kBF16: {
      const auto* p = reinterpret_cast<const numerics::BF16*>(data) + offset;
      for (int64_t i = 0; i < n; ++i) out[i] = numerics::ToFloat(p[i]);
      return;
    }
  }
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
