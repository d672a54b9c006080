// Gemma's norm weights, to and from transformers' w - 1 (gemma_norms.h).
#include "engine/formats/gemma_norms.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "engine/formats/checkpoint.h"
#include "engine/model/tensor_spec.h"

namespace samebits::formats {
namespace {

// Returns whether engine tensor `name` is a norm weight that Gemma's
// RMSNorm applies as (1 + w): every `...norm.weight`, as llama.cpp's
// converter decides it (q/k norms included).
bool IsOnePlusNorm(const std::string& name) {
  return name.ends_with("norm.weight");
}

}  // namespace

void AddOneToNormWeights(model::ModelWeights& w, LoadedStorage& storage) {
  model::ForEachPresentTensor(w, [&](const std::string& name, model::TensorView& v) {
    if (!IsOnePlusNorm(name)) return;
    std::vector<float> values(static_cast<size_t>(v.elements()));
    v.ReadF32(0, v.elements(), values.data());
    for (float& x : values) x += 1.0f;
    std::vector<std::byte> buffer(values.size() * sizeof(float));
    std::memcpy(buffer.data(), values.data(), buffer.size());
    storage.buffers.push_back(std::move(buffer));
    v = model::TensorView{model::DType::kF32, v.shape, storage.buffers.back().data()};
  });
}

model::ModelWeights NormWeightsMinusOne(const model::ModelWeights& w,
                                        std::vector<std::vector<float>>& values) {
  model::ModelWeights out = w;
  model::ForEachPresentTensor(out, [&](const std::string& name, model::TensorView& v) {
    if (!IsOnePlusNorm(name)) return;
    std::vector<float> h(static_cast<size_t>(v.elements()));
    v.ReadF32(0, v.elements(), h.data());
    for (size_t i = 0; i < h.size(); ++i) {
      const float x = h[i];
      h[i] = x - 1.0f;
      if (std::bit_cast<uint32_t>(h[i] + 1.0f) != std::bit_cast<uint32_t>(x)) {
        throw CheckpointError("cannot write norm weight '" + name + "' element " +
                              std::to_string(i) + " (" + std::to_string(x) +
                              ") as transformers' w - 1: F32 (w - 1) + 1 would not give it back");
      }
    }
    values.push_back(std::move(h));
    v = model::TensorView{model::DType::kF32, v.shape,
                          reinterpret_cast<const std::byte*>(values.back().data())};
  });
  return out;
}

}  // namespace samebits::formats
