// The tensor list: every synthetic checkpoint fills exactly the specs of
// its configuration, with matching shapes, and the names follow GGUF.
#include "engine/model/tensor_spec.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "engine/model/forward.h"
#include "engine/model/synthetic.h"

namespace samebits::model {
namespace {

TEST(TensorSpecTest, SyntheticWeightsFillEverySpecWithItsShape) {
  for (const auto& name : {"tiny", "medium"}) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      ModelWeights w = MakeSyntheticWeights(name, dtype);
      std::set<std::string> names;
      ForEachTensor(w.config, [&](const TensorSpec& s) {
        EXPECT_TRUE(names.insert(s.name).second) << "duplicate " << s.name;
        const TensorView& v = s.slot(w);
        ASSERT_TRUE(v.present()) << name << " " << s.name;
        EXPECT_EQ(v.shape, s.shape) << s.name;
        const bool weight_dtype = s.kind == TensorKind::kMatrix || s.kind == TensorKind::kEmbedding;
        EXPECT_EQ(v.dtype, weight_dtype ? dtype : DType::kF32) << s.name;
        EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data) % 64, 0u) << s.name;
      });
    }
  }
}

// Returns the spec named `name`, failing the test when it is missing.
TensorSpec Find(const ModelConfig& c, const std::string& name) {
  TensorSpec found{"", {}, TensorKind::kNorm, -2, false, nullptr};
  ForEachTensor(c, [&](const TensorSpec& s) {
    if (s.name == name) found = s;
  });
  EXPECT_EQ(found.name, name) << "missing";
  return found;
}

bool Has(const ModelConfig& c, const std::string& name) {
  bool found = false;
  ForEachTensor(c, [&](const TensorSpec& s) { found = found || s.name == name; });
  return found;
}

TEST(TensorSpecTest, TinyNamesAndShapesFollowGguf) {
  const ModelConfig c = SyntheticConfig("tiny");
  EXPECT_EQ(Find(c, "token_embd.weight").shape, (std::vector<int64_t>{256, 64}));
  EXPECT_EQ(Find(c, "blk.0.attn_q.weight").shape, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(Find(c, "blk.0.attn_k.weight").shape, (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(Find(c, "blk.1.attn_output.weight").shape, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(Find(c, "blk.1.attn_q_norm.weight").shape, (std::vector<int64_t>{16}));
  EXPECT_EQ(Find(c, "blk.0.ffn_gate_inp.weight").kind, TensorKind::kRouter);
  EXPECT_EQ(Find(c, "blk.0.ffn_gate_exps.weight").shape, (std::vector<int64_t>{4, 64, 64}));
  EXPECT_EQ(Find(c, "blk.0.ffn_down_exps.weight").shape, (std::vector<int64_t>{4, 64, 64}));
  EXPECT_EQ(Find(c, "blk.0.ffn_up_shexp.weight").shape, (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(Find(c, "blk.0.ffn_down_shexp.weight").shape, (std::vector<int64_t>{64, 32}));
  EXPECT_EQ(Find(c, "output.weight").shape, (std::vector<int64_t>{256, 64}));
  EXPECT_EQ(Find(c, "blk.1.ffn_norm.weight").layer, 1);
  EXPECT_FALSE(Has(c, "blk.0.attn_norm.bias"));  // RMSNorm has no bias
  EXPECT_FALSE(Has(c, "blk.0.ffn_gate.weight"));
}

TEST(TensorSpecTest, MediumHasLayerNormBiasesADenseLayerAndNoFfnNorm) {
  const ModelConfig c = SyntheticConfig("medium");
  EXPECT_FALSE(Find(c, "blk.0.attn_norm.bias").required);
  EXPECT_FALSE(Find(c, "output_norm.bias").required);
  EXPECT_FALSE(Has(c, "blk.0.ffn_norm.weight"));  // parallel block: one norm
  EXPECT_EQ(Find(c, "blk.1.ffn_gate.weight").shape, (std::vector<int64_t>{512, 256}));
  EXPECT_EQ(Find(c, "blk.1.ffn_down.weight").shape, (std::vector<int64_t>{256, 512}));
  EXPECT_FALSE(Has(c, "blk.1.ffn_gate_exps.weight"));
  EXPECT_EQ(Find(c, "blk.3.ffn_up_exps.weight").shape, (std::vector<int64_t>{8, 256, 256}));
  EXPECT_FALSE(Has(c, "output.weight"));  // tied
}

// Parameter counts from the shapes written out by hand, independently of
// the spec list.
TEST(TensorSpecTest, ParameterCountsMatchHandArithmetic) {
  // tiny: embedding, 2 x (norms, q, k, v, o, q/k norm, router, 3 x experts,
  // 3 x shared expert), output norm, output.
  const int64_t tiny_layer =
      64 + 64 * 64 + 2 * 32 * 64 + 64 * 64 + 16 + 16 + 64 + 4 * 64 + 3 * 4 * 64 * 64 + 3 * 32 * 64;
  EXPECT_EQ(CountParameters(MakeSyntheticWeights("tiny", DType::kBF16)),
            256 * 64 + 2 * tiny_layer + 64 + 256 * 64);
  // medium: LayerNorm with bias, parallel block, layer 1 dense, tied.
  const int64_t attn = 2 * 256 + 256 * 256 + 2 * 64 * 256 + 256 * 256;
  const int64_t moe = 8 * 256 + 3 * 8 * 256 * 256;
  const int64_t dense = 3 * 512 * 256;
  EXPECT_EQ(CountParameters(MakeSyntheticWeights("medium", DType::kBF16)),
            4096 * 256 + 4 * attn + 3 * moe + dense + 2 * 256);
}

TEST(TensorSpecTest, AbsentOptionalTensorsAreSkippedByHashAndCount) {
  ModelWeights w = MakeSyntheticWeights("medium", DType::kBF16);
  const int64_t before = CountParameters(w);
  const std::string hash_before = HashWeights(w);
  w.layers[0].attn_norm_bias = TensorView{};
  EXPECT_EQ(CountParameters(w), before - 256);
  EXPECT_NE(HashWeights(w), hash_before);
}

}  // namespace
}  // namespace samebits::model

namespace samebits::model {
namespace {

TEST(TensorSpecTest, CheckWeightsNamesMissingAndMisshapenTensors) {
  for (const auto& name : {"tiny", "medium", "wide"}) {
    EXPECT_TRUE(CheckWeights(MakeSyntheticWeights(name, DType::kBF16)).empty()) << name;
  }
  ModelWeights w = MakeSyntheticWeights("tiny", DType::kBF16);
  w.layers[1].k_norm = TensorView{};
  w.layers[0].wv.shape = {64, 32};
  const auto problems = CheckWeights(w);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0],
            "synthetic:tiny: tensor 'blk.0.attn_v.weight' has shape [64, 32] but the config "
            "implies [32, 64]");
  EXPECT_EQ(problems[1], "synthetic:tiny: required tensor 'blk.1.attn_k_norm.weight' is missing");
  // The reference pass refuses such weights up front.
  EXPECT_THROW(MakeReferenceForward(w, numerics::GetMathLibrary(numerics::MathProfile::kPortable)),
               std::invalid_argument);
  // An optional tensor may be absent.
  ModelWeights m = MakeSyntheticWeights("medium", DType::kBF16);
  m.output_norm_bias = TensorView{};
  EXPECT_TRUE(CheckWeights(m).empty());
}

}  // namespace
}  // namespace samebits::model
