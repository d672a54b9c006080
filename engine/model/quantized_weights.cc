#include "engine/model/quantized_weights.h"

#include <cstring>
#include <memory>

#include "engine/model/tensor_spec.h"
#include "engine/numerics/half.h"

namespace samebits::model {
namespace {

// The memory behind converted weights: the source's storage (for the
// tensors kept as they were) and the new tensors' bytes.
struct ConvertedStorage {
  std::shared_ptr<const void> source;
  std::vector<std::vector<std::byte>> buffers;
};

// Returns the type llama-quantize would give a tensor of rows `row`
// elements when asked for `type`, and notes a fallback.
WeightType Fitting(const WeightType& type, int64_t row, const std::string& name,
                   std::vector<std::string>* notes) {
  if (!type.quantized) return type;
  WeightType t = type;
  auto fits = [&](numerics::QuantType q) {
    return row % numerics::LayoutOf(q).block_elements == 0;
  };
  if (!fits(t.quant)) {
    switch (t.quant) {
      case numerics::QuantType::kQ4_K:
        t.quant = numerics::QuantType::kQ5_0;
        break;
      case numerics::QuantType::kQ5_K:
        t.quant = numerics::QuantType::kQ5_1;
        break;
      case numerics::QuantType::kQ6_K:
        t.quant = numerics::QuantType::kQ8_0;
        break;
      default:
        break;
    }
    if (!fits(t.quant)) t = WeightType{false, t.quant, DType::kF16};
    if (notes != nullptr) {
      notes->push_back(name + ": rows of " + std::to_string(row) +
                       " weights are not a multiple of " +
                       std::to_string(numerics::LayoutOf(type.quant).block_elements) + " (" +
                       numerics::LayoutOf(type.quant).name + "), stored as " +
                       (t.quantized ? numerics::LayoutOf(t.quant).name
                                    : std::string(numerics::DTypeName(t.dtype))));
    }
  }
  return t;
}

// Returns the exact f32 values of `v`.
std::vector<float> F32Values(const TensorView& v) {
  std::vector<float> x(static_cast<size_t>(v.elements()));
  v.ReadF32(0, v.elements(), x.data());
  return x;
}

}  // namespace

TensorView QuantizedView(numerics::QuantType type, std::vector<int64_t> shape,
                         const std::byte* blocks) {
  TensorView v;
  v.shape = std::move(shape);
  v.dtype = DType::kF32;
  v.quantized = true;
  v.quant_type = type;
  v.quant_blocks = blocks;
  v.data = blocks;
  return v;
}

ModelWeights DequantizedWeights(const ModelWeights& weights) {
  ModelWeights out = weights;
  auto storage = std::make_shared<ConvertedStorage>();
  storage->source = weights.storage;
  ForEachTensor(out.config, [&](const TensorSpec& spec) {
    TensorView& v = spec.slot(out);
    if (!v.present() || !v.quantized) return;
    std::vector<std::byte> bytes(static_cast<size_t>(v.elements()) * sizeof(float));
    v.ReadF32(0, v.elements(), reinterpret_cast<float*>(bytes.data()));
    storage->buffers.push_back(std::move(bytes));
    const std::vector<int64_t> shape = v.shape;
    v = TensorView{};
    v.shape = shape;
    v.data = storage->buffers.back().data();
  });
  out.storage = std::move(storage);
  return out;
}

bool ParseWeightType(const std::string& name, WeightType* out) {
  if (const numerics::QuantLayout* l = numerics::FindQuantById(name)) {
    *out = WeightType{true, l->type, DType::kF32};
    return true;
  }
  DType d;
  if (!numerics::ParseDType(name, &d)) return false;
  *out = WeightType{false, numerics::QuantType::kQ8_0, d};
  return true;
}

std::vector<std::string> WeightTypeNames() {
  std::vector<std::string> names;
  for (const numerics::QuantLayout& l : numerics::QuantLayouts()) names.emplace_back(l.id);
  for (const char* dtype : {"f32", "f16", "bf16"}) names.emplace_back(dtype);
  return names;
}

std::string WeightTypeChoices() {
  std::string s;
  for (const std::string& name : WeightTypeNames()) s += (s.empty() ? "" : "|") + name;
  return s;
}

ModelWeights ConvertWeights(const ModelWeights& weights, const WeightType& type,
                            std::vector<std::string>* notes) {
  ModelWeights out = weights;
  auto storage = std::make_shared<ConvertedStorage>();
  storage->source = weights.storage;
  ForEachTensor(out.config, [&](const TensorSpec& spec) {
    if (spec.kind != TensorKind::kMatrix && spec.kind != TensorKind::kEmbedding) return;
    TensorView& v = spec.slot(out);
    if (!v.present()) return;
    const int64_t row = v.shape.back();
    const WeightType t = Fitting(type, row, spec.name, notes);
    const std::vector<float> x = F32Values(v);
    const int64_t n = static_cast<int64_t>(x.size());
    if (t.quantized) {
      const numerics::QuantLayout& l = numerics::LayoutOf(t.quant);
      std::vector<std::byte> blocks(static_cast<size_t>(n / l.block_elements) * l.block_bytes);
      numerics::QuantizeRow(t.quant, x.data(), n, blocks.data());
      storage->buffers.push_back(std::move(blocks));
      v = QuantizedView(t.quant, v.shape, storage->buffers.back().data());
      return;
    }
    std::vector<std::byte> bytes(static_cast<size_t>(n) * numerics::DTypeSize(t.dtype));
    for (int64_t i = 0; i < n; ++i) {
      switch (t.dtype) {
        case DType::kF32:
          std::memcpy(bytes.data() + i * 4, &x[i], 4);
          break;
        case DType::kF16: {
          const numerics::F16 h = numerics::ToF16(x[i]);
          std::memcpy(bytes.data() + i * 2, &h, 2);
          break;
        }
        case DType::kBF16: {
          const numerics::BF16 h = numerics::ToBF16(x[i]);
          std::memcpy(bytes.data() + i * 2, &h, 2);
          break;
        }
      }
    }
    storage->buffers.push_back(std::move(bytes));
    const std::vector<int64_t> shape = v.shape;
    v = TensorView{};
    v.dtype = t.dtype;
    v.shape = shape;
    v.data = storage->buffers.back().data();
  });
  out.storage = std::move(storage);
  return out;
}

}  // namespace samebits::model
