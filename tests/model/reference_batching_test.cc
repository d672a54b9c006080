// THE BATCHING CONTRACT for the reference pass: a prompt fed one token at a
// time, as one prefill, or in arbitrary extend chunks gives bit-identical
// logits at every position, and identical activation traces. Prompts are
// long enough to cross every sliding window.
//
// Runtime: the reference is scalar and slow (about 30 ms per `medium` row
// and 150 ms per `wide` row on a 2.8 GHz Xeon), so `tiny` runs all three
// feedings while `medium` and `wide` compare token-by-token against chunks
// whose larger chunk is itself a prefill across the window; `wide` (vocab
// 32000, no window to cross) runs a 6-token prompt. `bench` (3x the cost of
// `wide` per row, no feature beyond `tiny`'s and `wide`'s) runs only a
// 3-token prompt, token by token against one prefill.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "engine/model/synthetic.h"
#include "engine/numerics/half.h"
#include "tests/model/model_test_helpers.h"

namespace samebits::model {
namespace {

using testing::FirstDifference;
using testing::PromptRun;
using testing::PromptTokens;
using testing::RunChunked;
using testing::RunOneByOne;

struct Case {
  const char* name;
  DType dtype;
  int prompt_length;
  bool full;  // also the single prefill (three feedings, not two)
};

// Prompt seeds: 1000 + the case index.
constexpr Case kCases[] = {
    {"tiny", DType::kBF16, 20, true},  // window 8 on layer 0
    {"tiny", DType::kF32, 20, true},     {"tiny", DType::kF16, 20, true},
    {"medium", DType::kBF16, 72, false},  // window 64 on layers 0-2; chunks 3, 1, 5, 63
    {"wide", DType::kBF16, 6, false},     // chunks 3, 1, 2
    {"bench", DType::kBF16, 3, false},    // one chunk of 3: a prefill
};

class BatchingTest : public ::testing::TestWithParam<int> {};

TEST_P(BatchingTest, PrefillDecodeAndChunksAgreeBitForBit) {
  const Case& c = kCases[GetParam()];
  const ModelWeights w = MakeSyntheticWeights(c.name, c.dtype);
  const auto tokens = PromptTokens(c.prompt_length, w.config.vocab_size, 1000 + GetParam());

  const PromptRun one_by_one = RunOneByOne(w, tokens);
  const PromptRun chunks = RunChunked(w, tokens, {3, 1, 5});  // then the rest
  ASSERT_EQ(chunks.rows.size(), static_cast<size_t>(c.prompt_length));
  EXPECT_EQ(FirstDifference(one_by_one, chunks), "");
  // Every op of every layer at every position, not only the logits.
  EXPECT_EQ(one_by_one.trace.hashes, chunks.trace.hashes);
  if (c.full) {
    const PromptRun prefill = RunChunked(w, tokens, {c.prompt_length});
    EXPECT_EQ(FirstDifference(one_by_one, prefill), "");
    EXPECT_EQ(one_by_one.trace.hashes, prefill.trace.hashes);
  }

  // The logits are usable: finite, and not all equal.
  for (const auto& row : chunks.rows) {
    float lo = row[0], hi = row[0];
    for (float v : row) {
      ASSERT_TRUE(std::isfinite(v));
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    EXPECT_LT(lo, hi);
  }
}

INSTANTIATE_TEST_SUITE_P(Synthetic, BatchingTest, ::testing::Range(0, 6),
                         [](const ::testing::TestParamInfo<int>& info) {
                           const Case& c = kCases[info.param];
                           return std::string(c.name) + "_" + numerics::DTypeName(c.dtype);
                         });

// Negative control: the comparison above can fail. The same prompt through
// weights that differ by one unit in the last place of one element of one
// matrix must be reported as different, and so must its trace.
TEST(BatchingNegativeControl, AOneUlpChangeIsDetected) {
  const ModelWeights w = MakeSyntheticWeights("tiny", DType::kBF16);
  ModelWeights perturbed = testing::CloneWeights(w);
  auto* q = reinterpret_cast<numerics::BF16*>(testing::MutableBytes(perturbed.layers[0].wq));
  q[5].bits ^= 1;  // one ulp in row 0 of layer 0's W_q
  const auto tokens = PromptTokens(20, 256, 1000);
  const PromptRun base = RunChunked(w, tokens, {3, 1, 5});
  const PromptRun changed = RunChunked(perturbed, tokens, {3, 1, 5});
  EXPECT_NE(FirstDifference(base, changed), "");
  EXPECT_NE(base.trace.hashes, changed.trace.hashes);
  // And the clone itself, unperturbed, is identical (the copy is faithful).
  EXPECT_EQ(FirstDifference(base, RunChunked(testing::CloneWeights(w), tokens, {20})), "");
}

// The last-position-only request returns exactly the last row of the
// all-positions request.
TEST(BatchingTest, LastRowOnlyEqualsTheLastOfAllRows) {
  const ModelWeights w = MakeSyntheticWeights("tiny", DType::kBF16);
  const auto tokens = PromptTokens(12, 256, 7);
  auto forward = MakeReferenceForward(w, testing::PortableMath());
  InferenceState s1 = MakeState(w.config), s2 = MakeState(w.config);
  std::vector<float> last, all;
  forward->Run(s1, tokens, false, last, nullptr);
  forward->Run(s2, tokens, true, all, nullptr);
  ASSERT_EQ(last.size(), 256u);
  ASSERT_EQ(all.size(), 12u * 256u);
  EXPECT_EQ(std::memcmp(last.data(), all.data() + 11 * 256, 256 * sizeof(float)), 0);
  EXPECT_EQ(s1.n_past, 12);
  EXPECT_EQ(s1.k_cache, s2.k_cache);
  EXPECT_EQ(s1.v_cache, s2.v_cache);
}

}  // namespace
}  // namespace samebits::model
