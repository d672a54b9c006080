// Block-quantized weights through both passes: a quantized model holds its
// blocks only (no f32 copy), and the cpu pass, which dequantizes inside its
// kernels, gives the reference pass's logits bit for bit on every available
// ISA, for prefill (GEMM) and decode (GEMV) alike.
#include <gtest/gtest.h>

#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/model/forward.h"
#include "engine/model/quantized_weights.h"
#include "engine/model/synthetic.h"
#include "engine/model/tensor_spec.h"
#include "engine/threads/thread_pool.h"
#include "tests/model/model_test_helpers.h"

namespace samebits::model {
namespace {

ModelWeights Quantized(const std::string& synthetic, const char* type) {
  WeightType t;
  EXPECT_TRUE(ParseWeightType(type, &t)) << type;
  return ConvertWeights(MakeSyntheticWeights(synthetic, DType::kF32), t, nullptr);
}

// Returns the logits of every position: a prefill of 5 tokens, then 3
// decode steps.
std::vector<float> Logits(Forward& forward, const ModelConfig& config) {
  const std::vector<int32_t> tokens = testing::PromptTokens(8, config.vocab_size, 77);
  InferenceState state = MakeState(config);
  std::vector<float> all, logits;
  size_t at = 0;
  for (size_t n : {5, 1, 1, 1}) {
    forward.Run(state, std::span<const int32_t>(tokens.data() + at, n), true, logits, nullptr);
    all.insert(all.end(), logits.begin(), logits.end());
    at += n;
  }
  return all;
}

TEST(QuantizedWeights, ViewsHoldTheBlocksOnly) {
  const ModelWeights w = Quantized("medium", "q8_0");
  ModelWeights& m = const_cast<ModelWeights&>(w);
  size_t quantized = 0, held = 0, f32_equivalent = 0;
  ForEachTensor(w.config, [&](const TensorSpec& spec) {
    const TensorView& v = spec.slot(m);
    if (!v.present()) return;
    held += v.bytes();
    f32_equivalent += static_cast<size_t>(v.elements()) * sizeof(float);
    if (!v.quantized) return;
    ++quantized;
    EXPECT_EQ(v.data, v.quant_blocks) << spec.name;
    EXPECT_EQ(v.bytes(), v.quant_bytes()) << spec.name;
  });
  EXPECT_GT(quantized, 0u);
  // Q8_0 is 34 bytes per 32 weights: the views are about a quarter of f32.
  EXPECT_LT(held * 3, f32_equivalent) << held << " bytes held";
}

// Reading a quantized tensor's elements one at a time or a row at a time
// gives the same dequantized values.
TEST(QuantizedWeights, AtAndReadF32Agree) {
  const ModelWeights w = Quantized("medium", "q4_k");
  const TensorView& v = w.layers[0].wq;
  ASSERT_TRUE(v.quantized);
  const int64_t n = v.shape.back();
  std::vector<float> row(static_cast<size_t>(n));
  v.ReadF32(n, n, row.data());
  for (int64_t i = 0; i < n; ++i) {
    const float a = v.At(n + i);
    ASSERT_EQ(std::memcmp(&a, &row[static_cast<size_t>(i)], sizeof(float)), 0) << i;
  }
  EXPECT_THROW(v.ReadF32(1, n, row.data()), std::logic_error);
}

class QuantizedForward : public ::testing::TestWithParam<const char*> {};

TEST_P(QuantizedForward, CpuPassEqualsReferenceOnEveryIsa) {
  const ModelWeights w = Quantized("medium", GetParam());
  auto reference = MakeReferenceForward(w, testing::PortableMath(), kernels::Isa::kScalar);
  const std::vector<float> want = Logits(*reference, w.config);
  for (kernels::Isa isa : kernels::AvailableIsas()) {
    threads::ThreadPool pool(2);
    CpuOptions options;
    options.isa = isa;
    auto cpu = MakeCpuForward(w, testing::PortableMath(), pool, options);
    const std::vector<float> got = Logits(*cpu, w.config);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
        << GetParam() << " on " << kernels::IsaName(isa);
  }
}

INSTANTIATE_TEST_SUITE_P(Types, QuantizedForward,
                         ::testing::Values("q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k",
                                           "q6_k"));

}  // namespace
}  // namespace samebits::model
