// ModelConfig::Validate: every synthetic shape is valid, and each broken
// field yields a message that names the field.
#include "engine/model/config.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "engine/model/forward.h"
#include "engine/model/synthetic.h"

namespace samebits::model {
namespace {

// Returns all messages joined, for matching and for failure output.
std::string Messages(const ModelConfig& c) {
  std::string all;
  for (const auto& m : c.Validate()) all += m + "\n";
  return all;
}

TEST(ConfigTest, SyntheticShapesAreValid) {
  for (const auto& name : SyntheticNames()) {
    EXPECT_EQ(Messages(SyntheticConfig(name)), "") << name;
  }
}

TEST(ConfigTest, UnknownSyntheticNameListsTheKnownOnes) {
  try {
    SyntheticConfig("huge");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tiny, gemma, medium, wide and bench"), std::string::npos);
  }
}

struct Broken {
  const char* what;
  std::function<void(ModelConfig&)> edit;
  const char* expected;  // a substring of the message
};

TEST(ConfigTest, EachProblemNamesTheFieldAndTheFix) {
  const Broken cases[] = {
      {"zero width", [](ModelConfig& c) { c.d_model = 0; }, "`d_model` is 0; it must be positive"},
      {"negative vocab", [](ModelConfig& c) { c.vocab_size = -3; }, "`vocab_size` is -3"},
      {"gqa", [](ModelConfig& c) { c.n_kv_heads = 3; }, "not a multiple of `n_kv_heads` (3)"},
      {"odd rope", [](ModelConfig& c) { c.rope_dim = 7; }, "is odd"},
      {"rope too wide", [](ModelConfig& c) { c.rope_dim = 32; },
       "`rope_dim` (32) exceeds `head_dim` (16)"},
      {"negative rope", [](ModelConfig& c) { c.rope_dim = -2; }, "`rope_dim` is -2"},
      {"top_k", [](ModelConfig& c) { c.top_k = 5; }, "`top_k` (5) exceeds `n_experts` (4)"},
      {"no experts", [](ModelConfig& c) { c.n_experts = 0; },
       "`n_experts` is 0 but some layers have `moe` = true"},
      {"no expert width", [](ModelConfig& c) { c.expert_ffn_dim = 0; }, "`expert_ffn_dim` is 0"},
      {"zero top_k", [](ModelConfig& c) { c.top_k = 0; }, "`top_k` is 0"},
      {"dense without ffn", [](ModelConfig& c) { c.layers[1].moe = false; },
       "`ffn_dim` is 0 but some layers are dense"},
      {"no layers", [](ModelConfig& c) { c.layers.clear(); }, "`layers` is empty"},
      {"window", [](ModelConfig& c) { c.layers[0].sliding_window = -1; },
       "`layers[0].sliding_window` is -1"},
      {"eps", [](ModelConfig& c) { c.norm_eps = 0.0f; }, "`norm_eps`"},
      {"rope base", [](ModelConfig& c) { c.rope_base = 1.0f; }, "`rope_base`"},
      {"logit scale", [](ModelConfig& c) { c.logit_scale = 0.0f; }, "`logit_scale`"},
      {"max_seq_len", [](ModelConfig& c) { c.max_seq_len = 0; }, "`max_seq_len` is 0"},
      {"shared expert", [](ModelConfig& c) { c.shared_expert_ffn_dim = -1; },
       "`shared_expert_ffn_dim` is -1"},
  };
  for (const Broken& b : cases) {
    ModelConfig c = SyntheticConfig("tiny");
    b.edit(c);
    const std::string all = Messages(c);
    EXPECT_NE(all.find(b.expected), std::string::npos) << b.what << ": got\n" << all;
    // Every message says which model it is about.
    EXPECT_EQ(all.rfind("synthetic:tiny: ", 0), 0u) << b.what;
  }
}

TEST(ConfigTest, ExpertFieldsWithoutMoeLayersAreReported) {
  ModelConfig c = SyntheticConfig("tiny");
  c.ffn_dim = 64;
  for (auto& l : c.layers) l.moe = false;
  EXPECT_NE(Messages(c).find("no layer has `moe` = true"), std::string::npos);
}

TEST(ConfigTest, KernelPathNamesRoundTrip) {
  for (KernelPath p : {KernelPath::kReference, KernelPath::kCpu}) {
    KernelPath parsed;
    ASSERT_TRUE(ParseKernelPath(KernelPathName(p), &parsed));
    EXPECT_EQ(parsed, p);
  }
  KernelPath unused;
  EXPECT_FALSE(ParseKernelPath("fast", &unused));
}

TEST(ConfigTest, MakeStateHasOneCachePerLayer) {
  const ModelConfig c = SyntheticConfig("medium");
  const InferenceState s = MakeState(c);
  EXPECT_EQ(s.n_past, 0);
  EXPECT_EQ(s.k_cache.size(), 4u);
  EXPECT_EQ(s.v_cache.size(), 4u);
}

}  // namespace
}  // namespace samebits::model
