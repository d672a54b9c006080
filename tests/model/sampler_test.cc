// The sampler (C10): greedy is the argmax with ties to the lower id and NaN
// never chosen; seeded sampling reproduces exactly and depends on the seed.
#include "engine/model/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "tests/model/model_test_helpers.h"

namespace samebits::model {
namespace {

using testing::PortableMath;

TEST(SamplerTest, ArgmaxTiesGoToTheLowerIndexAndNanIsNeverChosen) {
  EXPECT_EQ(Argmax(std::vector<float>{1, 3, 3, 2}), 1);
  EXPECT_EQ(Argmax(std::vector<float>{NAN, 1, NAN, 1}), 1);
  EXPECT_EQ(Argmax(std::vector<float>{-INFINITY, -INFINITY}), 0);
  EXPECT_EQ(Argmax(std::vector<float>{NAN, NAN}), 0);
  EXPECT_EQ(Argmax(std::vector<float>{NAN, -INFINITY}), 1);
  EXPECT_EQ(Argmax(std::vector<float>{-0.0f, 0.0f}), 0);  // equal values: lower index
}

// Returns 64 pseudo-random logits (seed 99) with a moderate spread.
std::vector<float> SomeLogits() {
  const auto ids = testing::PromptTokens(64, 1 << 16, 99);
  std::vector<float> logits;
  for (int32_t id : ids) logits.push_back(static_cast<float>(id) / 16384.0f);
  return logits;
}

std::vector<int32_t> Draw(const SamplerConfig& c, const std::vector<float>& logits, int steps) {
  std::vector<int32_t> out;
  for (int s = 0; s < steps; ++s) out.push_back(SampleToken(c, logits, s, PortableMath()));
  return out;
}

TEST(SamplerTest, GreedyIsTheArgmax) {
  const auto logits = SomeLogits();
  SamplerConfig greedy;
  EXPECT_EQ(SampleToken(greedy, logits, 17, PortableMath()), Argmax(logits));
}

TEST(SamplerTest, SameSeedSameTokensOtherSeedDiffers) {
  const auto logits = SomeLogits();
  SamplerConfig c{.kind = SamplerConfig::Kind::kSample, .temperature = 1.0f, .seed = 42};
  const auto a = Draw(c, logits, 64);
  EXPECT_EQ(a, Draw(c, logits, 64));
  c.seed = 43;
  EXPECT_NE(a, Draw(c, logits, 64));
  // Sampling is not greedy in disguise: several tokens occur.
  EXPECT_GT(std::set<int32_t>(a.begin(), a.end()).size(), 5u);
}

TEST(SamplerTest, TopKAndTopPRestrictTheCandidates) {
  const auto logits = SomeLogits();
  SamplerConfig c{.kind = SamplerConfig::Kind::kSample, .temperature = 2.0f, .top_k = 3, .seed = 5};
  std::vector<int32_t> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  const std::set<int32_t> top3(order.begin(), order.begin() + 3);
  for (int32_t t : Draw(c, logits, 100)) EXPECT_TRUE(top3.count(t)) << t;

  c.top_k = 1;  // a single candidate is the argmax
  for (int32_t t : Draw(c, logits, 10)) EXPECT_EQ(t, Argmax(logits));
  c.top_k = 0;
  c.top_p = 1e-6f;  // the first candidate alone reaches top_p
  for (int32_t t : Draw(c, logits, 10)) EXPECT_EQ(t, Argmax(logits));
}

TEST(SamplerTest, TiedLogitsRankByLowerIdAndNanIsSkipped) {
  const std::vector<float> logits = {NAN, 5.0f, 5.0f, -1.0f};
  SamplerConfig c{.kind = SamplerConfig::Kind::kSample, .top_k = 1, .seed = 1};
  EXPECT_EQ(SampleToken(c, logits, 0, PortableMath()), 1);
  c.top_k = 0;
  for (int32_t t : Draw(c, logits, 50)) EXPECT_NE(t, 0);
}

TEST(SamplerTest, BadSettingsThrow) {
  const auto logits = SomeLogits();
  SamplerConfig c{.kind = SamplerConfig::Kind::kSample};
  c.temperature = 0.0f;
  EXPECT_THROW(SampleToken(c, logits, 0, PortableMath()), std::invalid_argument);
  c.temperature = 1.0f;
  c.top_p = 0.0f;
  EXPECT_THROW(SampleToken(c, logits, 0, PortableMath()), std::invalid_argument);
  c.top_p = 1.5f;
  EXPECT_THROW(SampleToken(c, logits, 0, PortableMath()), std::invalid_argument);
  c.top_p = 1.0f;
  c.top_k = -1;
  EXPECT_THROW(SampleToken(c, logits, 0, PortableMath()), std::invalid_argument);
}

}  // namespace
}  // namespace samebits::model
