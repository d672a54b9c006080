// Quantized GGUF tensors against llama.cpp's own files:
// - each quantized file and its `.deq-f32` twin (the same weights turned
//   into F32 by llama.cpp's dequantization) give the same f32 weights and
//   the same logits, bit for bit;
// - quantizing small_dense_qwen3_f32.gguf with ggml's reference quantizers
//   gives the very bytes `llama-quantize` wrote for Q8_0 and Q6_K;
// - every supported type survives export and reload bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>

#include "engine/formats/checkpoint.h"
#include "engine/formats/gguf.h"
#include "engine/formats/gguf_writer.h"
#include "engine/model/quantized_weights.h"
#include "engine/model/synthetic.h"
#include "engine/model/tensor_spec.h"
#include "engine/numerics/half.h"
#include "tests/formats/formats_test_helpers.h"

namespace samebits::formats {
namespace {

using testing::Checkpoint;

// Calls `fn(name, view)` for every present tensor of `w`.
template <typename Fn>
void ForEachView(const model::ModelWeights& w, Fn fn) {
  model::ModelWeights& m = const_cast<model::ModelWeights&>(w);
  model::ForEachTensor(w.config, [&](const model::TensorSpec& spec) {
    const model::TensorView& v = spec.slot(m);
    if (v.present()) fn(spec.name, v);
  });
}

// Returns "Q4_K:14 Q6_K:2 F32:9": the tensor types of `w`, counted.
std::string TypeCounts(const model::ModelWeights& w) {
  std::map<std::string, int> n;
  ForEachView(w, [&](const std::string&, const model::TensorView& v) {
    ++n[v.quantized ? numerics::LayoutOf(v.quant_type).name : numerics::DTypeName(v.dtype)];
  });
  std::string s;
  for (const auto& [k, c] : n) s += (s.empty() ? "" : " ") + k + ":" + std::to_string(c);
  return s;
}

class QuantizedTwin : public ::testing::TestWithParam<const char*> {};

// The weights of QTYPE.gguf, dequantized by us, are the F32 tensors of
// QTYPE.deq-f32.gguf (llama.cpp's dequantization), every bit of every
// weight; then the logits are too.
TEST_P(QuantizedTwin, SameWeightsAndLogitsAsTheDequantizedFile) {
  SKIP_WITHOUT_CHECKPOINTS();
  const std::string stem = std::string("small_dense_qwen3_") + GetParam();
  const model::ModelWeights q = LoadCheckpoint("gguf:" + Checkpoint(stem + ".gguf"));
  const model::ModelWeights f = LoadCheckpoint("gguf:" + Checkpoint(stem + ".deq-f32.gguf"));
  int quantized = 0, compared = 0;
  int64_t differing_weights = 0;
  model::ModelWeights& fm = const_cast<model::ModelWeights&>(f);
  model::ForEachTensor(q.config, [&](const model::TensorSpec& spec) {
    const model::TensorView& a = spec.slot(const_cast<model::ModelWeights&>(q));
    const model::TensorView& b = spec.slot(fm);
    ASSERT_EQ(a.present(), b.present()) << spec.name;
    if (!a.present()) return;
    ASSERT_EQ(b.dtype, model::DType::kF32) << spec.name;
    ASSERT_FALSE(b.quantized) << spec.name;
    ASSERT_EQ(a.elements(), b.elements()) << spec.name;
    quantized += a.quantized;
    ++compared;
    // A quantized view holds its blocks only; ReadF32 dequantizes them.
    std::vector<float> x(static_cast<size_t>(a.elements()));
    a.ReadF32(0, a.elements(), x.data());
    const float* y = reinterpret_cast<const float*>(b.data);
    for (int64_t i = 0; i < a.elements(); ++i) {
      // Bits, not values: a NaN or -0 that moved is a difference.
      uint32_t x_bits = 0, y_bits = 0;
      std::memcpy(&x_bits, &x[i], sizeof x_bits);
      std::memcpy(&y_bits, &y[i], sizeof y_bits);
      differing_weights += x_bits != y_bits;
    }
  });
  std::cout << "[twin] " << stem << ": " << TypeCounts(q) << "; " << compared
            << " tensors compared, " << differing_weights << " weights differ\n";
  EXPECT_GT(quantized, 0) << "the file holds no quantized tensor";
  EXPECT_EQ(differing_weights, 0);

  const auto tokens = testing::LlamaCppTokens(q.config.vocab_size);
  const auto lq = testing::ReferenceLogits(q, tokens);
  EXPECT_TRUE(testing::SameBits(lq, testing::ReferenceLogits(f, tokens)));
  EXPECT_TRUE(testing::SameBits(lq, testing::CpuLogits(q, tokens, 2)));
  RecordProperty("types", TypeCounts(q));
}

INSTANTIATE_TEST_SUITE_P(SharedGguf, QuantizedTwin,
                         ::testing::Values("q8_0", "q4_0", "q4_k_m", "q6_k"));

// Negative control: the weight comparison sees a single ulp. (A change of
// operation order would not be seen, and need not be: every product in
// these formulas is exact in f32, see engine/numerics/README.md.)
TEST(QuantizedTwinControl, OneUlpIsSeen) {
  SKIP_WITHOUT_CHECKPOINTS();
  const model::ModelWeights q =
      LoadCheckpoint("gguf:" + Checkpoint("small_dense_qwen3_q4_k_m.gguf"));
  const model::ModelWeights f =
      LoadCheckpoint("gguf:" + Checkpoint("small_dense_qwen3_q4_k_m.deq-f32.gguf"));
  const model::TensorView& a = q.layers[0].wq;
  const model::TensorView& b = f.layers[0].wq;
  ASSERT_TRUE(a.quantized);
  std::vector<float> ours(a.elements());
  a.ReadF32(0, a.elements(), ours.data());
  ASSERT_EQ(std::memcmp(ours.data(), b.data, ours.size() * sizeof(float)), 0);
  ours[12345] = std::nextafter(ours[12345], 1e30f);
  EXPECT_NE(std::memcmp(ours.data(), b.data, ours.size() * sizeof(float)), 0);
}

// Returns the bytes of tensor `name` in `file` (whose bytes are `bytes`).
std::vector<std::byte> TensorBytes(const GgufFile& file, const std::vector<std::byte>& bytes,
                                   const std::string& name) {
  for (const GgufTensorInfo& t : file.tensors) {
    if (t.name == name) {
      const std::byte* p = bytes.data() + file.data_offset + t.offset;
      return {p, p + t.nbytes};
    }
  }
  ADD_FAILURE() << "no tensor " << name;
  return {};
}

class ExportMatchesLlamaQuantize : public ::testing::TestWithParam<const char*> {};

// export --type q8_0|q6_k of the F32 file writes llama-quantize's bytes:
// every tensor has its type, shape and bytes.
TEST_P(ExportMatchesLlamaQuantize, EveryTensorsBytes) {
  SKIP_WITHOUT_CHECKPOINTS();
  const std::string id = GetParam();
  const model::ModelWeights f32 =
      LoadCheckpoint("gguf:" + Checkpoint("small_dense_qwen3_f32.gguf"));
  model::WeightType type;
  ASSERT_TRUE(model::ParseWeightType(id, &type));
  std::vector<std::string> notes;
  const model::ModelWeights ours = model::ConvertWeights(f32, type, &notes);
  EXPECT_TRUE(notes.empty());
  const std::vector<std::byte> our_bytes = GgufBytes(ours);
  const GgufFile our_file = ParseGguf(our_bytes, "export");
  const std::vector<std::byte> their_bytes =
      testing::ReadBytes(Checkpoint("small_dense_qwen3_" + id + ".gguf"));
  const GgufFile their_file = ParseGguf(their_bytes, id);
  ASSERT_EQ(our_file.tensors.size(), their_file.tensors.size());
  int equal = 0, quantized = 0;
  for (const GgufTensorInfo& theirs : their_file.tensors) {
    SCOPED_TRACE(theirs.name);
    const GgufTensorInfo* mine = nullptr;
    for (const GgufTensorInfo& t : our_file.tensors) {
      if (t.name == theirs.name) mine = &t;
    }
    ASSERT_NE(mine, nullptr);
    EXPECT_EQ(mine->ggml_type, theirs.ggml_type);
    EXPECT_EQ(mine->ne, theirs.ne);
    const bool same = TensorBytes(our_file, our_bytes, theirs.name) ==
                      TensorBytes(their_file, their_bytes, theirs.name);
    EXPECT_TRUE(same);
    equal += same;
    quantized += theirs.ggml_type != kGgmlF32;
  }
  std::cout << "[export] --type " << id << ": " << equal << "/" << their_file.tensors.size()
            << " tensors byte-identical to llama-quantize's (" << quantized << " quantized)\n";
  EXPECT_GT(quantized, 0);
}

INSTANTIATE_TEST_SUITE_P(SharedGguf, ExportMatchesLlamaQuantize, ::testing::Values("q8_0", "q6_k"));

// Negative control for the byte comparison: Q6_K quantized from slightly
// different weights (one ulp on one weight per super-block) is seen.
TEST(ExportMatchesLlamaQuantizeControl, ADifferentInputIsSeen) {
  std::vector<float> x(256);
  for (int i = 0; i < 256; ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 0.02f;
  std::vector<std::byte> a(210), b(210);
  numerics::QuantizeRow(numerics::QuantType::kQ6_K, x.data(), 256, a.data());
  // The weight of largest magnitude sets the super-block's scale.
  int big = 0;
  for (int i = 1; i < 256; ++i) big = std::fabs(x[i]) > std::fabs(x[big]) ? i : big;
  x[big] = x[big] * 0.75f;
  numerics::QuantizeRow(numerics::QuantType::kQ6_K, x.data(), 256, b.data());
  EXPECT_NE(a, b);
}

// Every type: quantize a synthetic checkpoint, write it as GGUF, read it
// back: the same blocks, the same dequantized values, the same logits; and the
// dequantized weights stay close to the originals.
class QuantizedRoundTrip : public ::testing::TestWithParam<numerics::QuantLayout> {};

TEST_P(QuantizedRoundTrip, ExportAndReload) {
  const numerics::QuantLayout& l = GetParam();
  const model::ModelWeights f32 = model::MakeSyntheticWeights("medium", model::DType::kF32);
  const model::ModelWeights q =
      model::ConvertWeights(f32, model::WeightType{true, l.type}, nullptr);
  EXPECT_EQ(model::HashWeights(q), model::HashWeights(model::ConvertWeights(
                                       f32, model::WeightType{true, l.type}, nullptr)));
  const std::string path = testing::ScratchDir(std::string("quant_") + l.id) + "/m.gguf";
  WriteGguf(q, path);
  const model::ModelWeights back = LoadCheckpoint("gguf:" + path);
  EXPECT_EQ(model::HashWeights(back), model::HashWeights(q));
  double max_rel = 0;
  ForEachView(back, [&](const std::string& name, const model::TensorView& v) {
    if (!v.quantized) return;
    const model::TensorView* orig = nullptr;
    ForEachView(f32, [&](const std::string& n, const model::TensorView& o) {
      if (n == name) orig = &o;
    });
    std::vector<float> got(static_cast<size_t>(v.elements())), want(got.size());
    v.ReadF32(0, v.elements(), got.data());
    orig->ReadF32(0, orig->elements(), want.data());
    double err = 0, norm = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      err += std::pow(double(got[i]) - want[i], 2);
      norm += std::pow(double(want[i]), 2);
    }
    max_rel = std::max(max_rel, std::sqrt(err / norm));
  });
  std::cout << "[roundtrip] " << l.name << ": " << TypeCounts(back) << ", worst relative rms error "
            << max_rel << "\n";
  // 4-bit types keep about 10% relative error, 8-bit well under 1%.
  EXPECT_LT(max_rel, 0.15);
  EXPECT_TRUE(testing::SameBits(testing::ReferenceLogits(q, {1, 2, 3}),
                                testing::ReferenceLogits(back, {1, 2, 3})));
}

INSTANTIATE_TEST_SUITE_P(EveryType, QuantizedRoundTrip,
                         ::testing::ValuesIn(numerics::QuantLayouts().begin(),
                                             numerics::QuantLayouts().end()),
                         [](const auto& info) { return std::string(info.param.id); });

// A tensor whose rows fit no k-quant block falls back as llama-quantize does.
TEST(ConvertWeights, KQuantFallbackOnNarrowRows) {
  const model::ModelWeights f32 = model::MakeSyntheticWeights("tiny", model::DType::kF32);
  std::vector<std::string> notes;
  const model::ModelWeights q =
      model::ConvertWeights(f32, model::WeightType{true, numerics::QuantType::kQ4_K}, &notes);
  EXPECT_FALSE(notes.empty());
  EXPECT_EQ(TypeCounts(q).find("Q4_K"), std::string::npos) << TypeCounts(q);
  EXPECT_NE(TypeCounts(q).find("Q5_0"), std::string::npos) << TypeCounts(q);
}

}  // namespace
}  // namespace samebits::formats
