// The reference pass's behaviour beyond batching: input errors, the
// sliding-window mask, router ties, the ops of the contract, trace names.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "engine/model/reference_ops.h"
#include "engine/model/synthetic.h"
#include "engine/numerics/lanes.h"
#include "tests/model/model_test_helpers.h"

namespace samebits::model {
namespace {

using testing::PortableMath;

TEST(ReferenceTest, TokenOutOfRangeThrowsAndLeavesTheStateAlone) {
  const ModelWeights w = MakeSyntheticWeights("tiny", DType::kBF16);
  auto forward = MakeReferenceForward(w, PortableMath());
  InferenceState s = MakeState(w.config);
  std::vector<float> logits;
  const std::vector<int32_t> ok = {1, 2, 3};
  forward->Run(s, ok, false, logits, nullptr);
  for (int32_t bad : {256, -1, 1 << 30}) {
    const std::vector<int32_t> tokens = {5, bad};
    try {
      forward->Run(s, tokens, false, logits, nullptr);
      FAIL() << "no exception for " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("token id " + std::to_string(bad) + " at index 1"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(s.n_past, 3);
    EXPECT_EQ(s.k_cache[0].size(), 3u * 32u);
  }
}

TEST(ReferenceTest, ContextPastMaxSeqLenThrows) {
  const ModelWeights w = MakeSyntheticWeights("tiny", DType::kBF16);  // max_seq_len 128
  auto forward = MakeReferenceForward(w, PortableMath());
  InferenceState s = MakeState(w.config);
  std::vector<float> logits;
  const std::vector<int32_t> tokens(128, 7);
  forward->Run(s, tokens, false, logits, nullptr);  // exactly full is fine
  const std::vector<int32_t> one = {7};
  EXPECT_THROW(forward->Run(s, one, false, logits, nullptr), std::invalid_argument);
  EXPECT_EQ(s.n_past, 128);
}

TEST(ReferenceTest, AStateOfAnotherModelIsRejected) {
  const ModelWeights w = MakeSyntheticWeights("tiny", DType::kBF16);
  auto forward = MakeReferenceForward(w, PortableMath());
  InferenceState s = MakeState(SyntheticConfig("medium"));
  std::vector<float> logits;
  const std::vector<int32_t> one = {7};
  EXPECT_THROW(forward->Run(s, one, false, logits, nullptr), std::invalid_argument);
}

// The sliding window, observed from outside: layer 0 of `tiny` has a window
// of 8, so its attention at position p >= 8 cannot see token 0; layer 1 is
// global and can.
TEST(ReferenceTest, SlidingWindowHidesKeysOutsideTheWindow) {
  const ModelWeights w = MakeSyntheticWeights("tiny", DType::kBF16);
  auto a_tokens = testing::PromptTokens(20, 256, 11);
  auto b_tokens = a_tokens;
  b_tokens[0] = (a_tokens[0] + 1) % 256;
  const auto a = testing::RunChunked(w, a_tokens, {20});
  const auto b = testing::RunChunked(w, b_tokens, {20});
  auto hash = [](const testing::PromptRun& r, int layer, int pos) {
    return r.trace.hashes.at({layer, "attn", pos});
  };
  EXPECT_NE(hash(a, 0, 7), hash(b, 0, 7));  // key 0 is the 8th key back: visible
  for (int pos = 8; pos < 20; ++pos) EXPECT_EQ(hash(a, 0, pos), hash(b, 0, pos)) << pos;
  EXPECT_NE(hash(a, 1, 19), hash(b, 1, 19));  // global layer
}

TEST(ReferenceTest, TraceCarriesTheDocumentedOps) {
  for (const char* name : {"tiny", "medium"}) {
    const ModelWeights w = MakeSyntheticWeights(name, DType::kBF16);
    const auto run = testing::RunChunked(w, testing::PromptTokens(2, w.config.vocab_size, 3), {2});
    std::set<std::string> known(std::begin(kTraceOps), std::end(kTraceOps));
    known.insert({"embed", "output_norm", "logits"});
    std::set<std::string> seen;
    for (const auto& [key, hash] : run.trace.hashes) {
      const auto& [layer, op, pos] = key;
      EXPECT_TRUE(known.count(op)) << op;
      EXPECT_EQ(layer == -1, op == "embed" || op == "output_norm" || op == "logits") << op;
      seen.insert(op);
    }
    EXPECT_EQ(seen.count("router"), 1u) << name;
    // A parallel block (medium) has no separate FFN norm.
    EXPECT_EQ(seen.count("ffn_norm"), std::string(name) == "tiny" ? 1u : 0u) << name;
  }
}

TEST(ReferenceOpsTest, TopKBreaksTiesTowardTheLowerIndex) {
  const float p[] = {0.1f, 0.3f, 0.3f, 0.3f, 0.0f};
  EXPECT_EQ(ref::TopK(p, 5, 2), (std::vector<int>{1, 2}));
  EXPECT_EQ(ref::TopK(p, 5, 4), (std::vector<int>{1, 2, 3, 0}));
  const float q[] = {0.25f, 0.25f, 0.25f, 0.25f};
  EXPECT_EQ(ref::TopK(q, 4, 1), (std::vector<int>{0}));
}

// Router ties end to end: `tiny` with top_k 1, router rows 1 and 2 equal
// and rows 0 and 3 zero, so every token ties between experts 1 and 2 (or,
// when their logit is negative, between 0 and 3). Lower index wins, so
// zeroing the higher-index experts 2 and 3 changes nothing, while zeroing
// experts 0 and 1 does.
TEST(ReferenceTest, RouterTiesGoToTheLowerExpert) {
  ModelWeights w = testing::CloneWeights(MakeSyntheticWeights("tiny", DType::kBF16));
  w.config.top_k = 1;
  const int d = w.config.d_model;
  for (auto& layer : w.layers) {
    float* router = reinterpret_cast<float*>(testing::MutableBytes(layer.router));
    std::memcpy(router + 2 * d, router + 1 * d, d * sizeof(float));
    std::memset(router + 0 * d, 0, d * sizeof(float));
    std::memset(router + 3 * d, 0, d * sizeof(float));
  }
  auto zero_experts = [&](std::initializer_list<int> experts) {
    ModelWeights z = testing::CloneWeights(w);
    for (auto& layer : z.layers) {
      for (int e : experts) {
        for (const TensorView* t : {&layer.expert_gate, &layer.expert_up, &layer.expert_down}) {
          const size_t per_expert = t->bytes() / w.config.n_experts;
          std::memset(testing::MutableBytes(*t) + e * per_expert, 0, per_expert);
        }
      }
    }
    return z;
  };
  const auto tokens = testing::PromptTokens(10, 256, 21);
  const auto base = testing::RunChunked(w, tokens, {10});
  EXPECT_EQ(testing::FirstDifference(base, testing::RunChunked(zero_experts({2, 3}), tokens, {10})),
            "");
  EXPECT_NE(testing::FirstDifference(base, testing::RunChunked(zero_experts({0, 1}), tokens, {10})),
            "");
}

TEST(ReferenceOpsTest, RopePairsAndPartialRotation) {
  const auto& m = PortableMath();
  for (RopeStyle style : {RopeStyle::kInterleaved, RopeStyle::kNeox}) {
    float x[16] = {1.0f};
    ref::Rope(x, 8, style, 10000.0f, 0, m, TensorView{});  // position 0: the identity
    EXPECT_EQ(x[0], 1.0f);
    ref::Rope(x, 8, style, 10000.0f, 3, m, TensorView{});
    const int partner = style == RopeStyle::kInterleaved ? 1 : 4;
    EXPECT_EQ(x[0], m.cos(3.0f));  // inv_freq[0] = exp(0) = 1
    EXPECT_EQ(x[partner], m.sin(3.0f));
    for (int i = 1; i < 16; ++i) {
      if (i != partner) {
        EXPECT_EQ(x[i], 0.0f) << i;  // dims >= rot_dim stay
      }
    }
  }
}

TEST(ReferenceOpsTest, SoftmaxFollowsC4) {
  const auto& m = PortableMath();
  float s[3] = {1.0f, 2.0f, 0.5f};
  ref::Softmax(s, 3, m);
  const float e[3] = {m.exp(1.0f - 2.0f), m.exp(0.0f), m.exp(0.5f - 2.0f)};
  const float z = numerics::Sum(e, 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(s[i], e[i] / z);
}

}  // namespace
}  // namespace samebits::model

namespace samebits::model {
namespace {

// Keeps the data of every trace record.
class CapturingTrace : public TraceSink {
 public:
  void Record(int layer, const char* op, int position, const float* data, int64_t n) override {
    records[{layer, op, position}].assign(data, data + n);
  }
  std::map<std::tuple<int, std::string, int>, std::vector<float>> records;
};

// Returns the captured trace of `tokens` fed as one prefill.
CapturingTrace Capture(const ModelWeights& w, const std::vector<int32_t>& tokens) {
  CapturingTrace trace;
  auto forward = MakeReferenceForward(w, PortableMath());
  InferenceState s = MakeState(w.config);
  std::vector<float> logits;
  forward->Run(s, tokens, true, logits, &trace);
  return trace;
}

// Medium's layer 3 is a Cohere2-style global layer without RoPE, so its q is
// exactly W_q times the norm output; on layer 0 RoPE rotates it.
TEST(ReferenceTest, NoRopeLayerLeavesQueriesUnrotated) {
  const ModelWeights w = MakeSyntheticWeights("medium", DType::kBF16);
  const auto t = Capture(w, testing::PromptTokens(3, 4096, 5));
  const int q_dim = 8 * 32;
  for (int layer : {0, 3}) {
    const auto& xn = t.records.at({layer, "attn_norm", 2});
    std::vector<float> q(q_dim);
    ref::MatVec(kernels::GetKernelTable(kernels::Isa::kScalar), w.layers[layer].wq, 0, q_dim, 256,
                xn.data(), q.data());
    const bool same = q == t.records.at({layer, "q", 2});
    EXPECT_EQ(same, layer == 3) << "layer " << layer;
  }
}

// At position 0 a query sees one key with probability exactly 1, so each
// head's attention output is the value of the kv head it reads: with GQA,
// query head h reads kv head h / (n_heads / n_kv_heads).
TEST(ReferenceTest, GroupedQueryHeadsReadTheirKvHead) {
  for (const char* name : {"tiny", "medium"}) {
    const ModelWeights w = MakeSyntheticWeights(name, DType::kBF16);
    const ModelConfig& c = w.config;
    const auto t = Capture(w, {7});
    const auto& v = t.records.at({0, "v", 0});
    const auto& attn = t.records.at({0, "attn", 0});
    const int group = c.n_heads / c.n_kv_heads;
    for (int h = 0; h < c.n_heads; ++h) {
      EXPECT_EQ(std::memcmp(attn.data() + h * c.head_dim, v.data() + (h / group) * c.head_dim,
                            c.head_dim * sizeof(float)),
                0)
          << name << " head " << h;
    }
  }
}

}  // namespace
}  // namespace samebits::model

namespace samebits::model {
namespace {

// LayerNorm biases are optional (Cohere-style LayerNorm has none): without
// them the pass still runs, and with them they take part.
TEST(ReferenceTest, LayerNormBiasesAreOptionalAndUsed) {
  const ModelWeights w = MakeSyntheticWeights("medium", DType::kBF16);
  ModelWeights no_bias = w;
  for (auto& layer : no_bias.layers) layer.attn_norm_bias = TensorView{};
  no_bias.output_norm_bias = TensorView{};
  const auto tokens = testing::PromptTokens(2, 4096, 8);
  const auto with = testing::RunChunked(w, tokens, {2});
  const auto without = testing::RunChunked(no_bias, tokens, {2});
  EXPECT_NE(testing::FirstDifference(with, without), "");
  for (float v : without.rows[1]) ASSERT_TRUE(std::isfinite(v));
}

}  // namespace
}  // namespace samebits::model
