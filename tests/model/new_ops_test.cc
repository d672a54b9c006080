// The operations Gemma 2/3, Cohere2 and Llama 3.1 added to the contract
// (engine/numerics/README.md, C3, C5, C6), one test per clause: GELU in
// tanh form, soft-capping of attention scores and final logits, the
// embedding scale, post-norms, RoPE frequency factors and a separate RoPE
// base for sliding-window layers. Each recomputes the step from the trace's
// inputs with the contract's operations and compares bits, or checks the
// value against a double-precision formula where the bits are the profile's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "engine/model/forward.h"
#include "engine/model/reference_ops.h"
#include "engine/model/synthetic.h"
#include "engine/numerics/lanes.h"
#include "engine/numerics/math.h"
#include "tests/model/model_test_helpers.h"

namespace samebits::model {
namespace {

using testing::PortableMath;

// Keeps every trace record, keyed by (layer, op, position).
class KeepingTrace : public TraceSink {
 public:
  void Record(int layer, const char* op, int position, const float* data, int64_t n) override {
    records[{layer, op, position}].assign(data, data + n);
  }
  const std::vector<float>& At(int layer, const std::string& op, int position) const {
    return records.at({layer, op, position});
  }
  std::map<std::tuple<int, std::string, int>, std::vector<float>> records;
};

// Runs `tokens` through the reference pass in one prefill, all positions.
std::vector<float> RunTraced(const ModelWeights& w, const std::vector<int32_t>& tokens,
                             KeepingTrace* trace) {
  auto forward = MakeReferenceForward(w, PortableMath());
  InferenceState state = MakeState(w.config);
  std::vector<float> logits;
  forward->Run(state, tokens, true, logits, trace);
  return logits;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Returns a copy of `w` whose config is changed by `edit` (same tensors).
template <typename Edit>
ModelWeights WithConfig(const ModelWeights& w, Edit edit) {
  ModelWeights copy = w;
  edit(copy.config);
  return copy;
}

TEST(NewOpsTest, GeluTanhFollowsC3) {
  for (numerics::MathProfile profile :
       {numerics::MathProfile::kPortable, numerics::MathProfile::kLibm}) {
    const numerics::MathLibrary& m = numerics::GetMathLibrary(profile);
    for (float x = -12.0f; x <= 12.0f; x += 0.37f) {
      const double xd = x;
      const double want =
          0.5 * xd * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (xd + 0.044715 * xd * xd * xd)));
      const float got = numerics::GeluTanh(m, x);
      EXPECT_NEAR(got, want, 1e-6 * std::max(1.0, std::fabs(want))) << x;
      // The clause's steps, one f32 operation each, with the profile's tanh.
      const float inner = (0.7978845608f * x) * (1.0f + (0.044715f * x) * x);
      const float step = (0.5f * x) * (1.0f + m.tanh(inner));
      EXPECT_EQ(std::memcmp(&got, &step, sizeof got), 0) << x;
    }
  }
  EXPECT_EQ(numerics::GeluTanh(PortableMath(), 0.0f), 0.0f);
  EXPECT_EQ(numerics::GeluTanh(PortableMath(), 20.0f), 20.0f);
}

TEST(NewOpsTest, SoftCapFollowsC3) {
  const numerics::MathLibrary& m = PortableMath();
  const float cap = 30.0f, inv = 1.0f / cap;
  for (float x = -400.0f; x <= 400.0f; x += 3.3f) {
    const float got = numerics::SoftCap(m, x, cap, inv);
    EXPECT_LE(std::fabs(got), cap) << x;
    EXPECT_NEAR(got, cap * std::tanh(static_cast<double>(x) / cap), 1e-5) << x;
    const float step = m.tanh(x * inv) * cap;
    EXPECT_EQ(std::memcmp(&got, &step, sizeof got), 0) << x;
  }
  std::vector<float> v = {-1e6f, -2.0f, 0.0f, 0.5f, 1e6f};
  ref::SoftCap(v.data(), static_cast<int64_t>(v.size()), cap, m);
  EXPECT_EQ(v.front(), -cap);
  EXPECT_EQ(v.back(), cap);
  EXPECT_EQ(v[2], 0.0f);
}

TEST(NewOpsTest, EmbeddingScaleMultipliesTheRow) {
  const ModelWeights w = MakeSyntheticWeights("gemma", DType::kF32);
  ASSERT_EQ(w.config.embedding_scale, 8.0f);
  KeepingTrace trace;
  RunTraced(w, {5, 9}, &trace);
  const int d = w.config.d_model;
  std::vector<float> row(d);
  w.token_embedding.ReadF32(int64_t{9} * d, d, row.data());
  for (float& v : row) v = v * 8.0f;
  EXPECT_TRUE(SameBits(trace.At(-1, "embed", 1), row));
}

TEST(NewOpsTest, AttentionSoftCapSitsBetweenScaleAndSoftmax) {
  const ModelWeights w = MakeSyntheticWeights("gemma", DType::kBF16);
  const ModelConfig& c = w.config;
  ASSERT_GT(c.attn_softcap, 0.0f);
  KeepingTrace trace;
  RunTraced(w, testing::PromptTokens(12, c.vocab_size, 0x5c), &trace);
  const int hd = c.head_dim, group = c.n_heads / c.n_kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  bool capped_somewhere = false;
  // Layer 0 has a window of 8: position 11 sees keys 4..11; layer 1 sees all.
  for (int layer : {0, 1}) {
    const int pos = 11;
    const int first =
        c.layers[layer].sliding_window > 0 ? pos - c.layers[layer].sliding_window + 1 : 0;
    const std::vector<float>& q = trace.At(layer, "q", pos);
    std::vector<float> want(c.n_heads * hd, 0.0f);
    for (int h = 0; h < c.n_heads; ++h) {
      const int kvh = h / group;
      std::vector<float> s;
      for (int j = first; j <= pos; ++j) {
        const float* k = trace.At(layer, "k", j).data() + kvh * hd;
        const float raw = numerics::Dot(q.data() + h * hd, k, hd) * scale;
        const float capped = PortableMath().tanh(raw * (1.0f / c.attn_softcap)) * c.attn_softcap;
        capped_somewhere = capped_somewhere || capped != raw;
        s.push_back(capped);
      }
      ref::Softmax(s.data(), static_cast<int>(s.size()), PortableMath());
      for (int j = first; j <= pos; ++j) {
        const float* v = trace.At(layer, "v", j).data() + kvh * hd;
        for (int e = 0; e < hd; ++e) {
          want[h * hd + e] = std::fma(s[j - first], v[e], want[h * hd + e]);
        }
      }
    }
    EXPECT_TRUE(SameBits(trace.At(layer, "attn", pos), want)) << "layer " << layer;
  }
  EXPECT_TRUE(capped_somewhere);
}

TEST(NewOpsTest, FinalSoftCapBoundsTheLogits) {
  const ModelWeights w = MakeSyntheticWeights("gemma", DType::kBF16);
  const std::vector<int32_t> tokens = testing::PromptTokens(6, w.config.vocab_size, 0xfc);
  const std::vector<float> capped = RunTraced(w, tokens, nullptr);
  std::vector<float> uncapped =
      RunTraced(WithConfig(w, [](ModelConfig& c) { c.final_softcap = 0.0f; }), tokens, nullptr);
  float max_uncapped = 0.0f;
  for (float v : uncapped) max_uncapped = std::max(max_uncapped, std::fabs(v));
  EXPECT_GT(max_uncapped, w.config.final_softcap / 2) << "the cap would not bend the logits";
  for (float v : capped) EXPECT_LE(std::fabs(v), w.config.final_softcap);
  ref::SoftCap(uncapped.data(), static_cast<int64_t>(uncapped.size()), w.config.final_softcap,
               PortableMath());
  EXPECT_TRUE(SameBits(capped, uncapped));
}

TEST(NewOpsTest, PostNormsNormaliseEachBranch) {
  const ModelWeights w = MakeSyntheticWeights("gemma", DType::kBF16);
  const ModelConfig& c = w.config;
  const int d = c.d_model, f = c.ffn_dim, q_dim = c.n_heads * c.head_dim;
  const kernels::KernelTable& kt = kernels::GetKernelTable(kernels::Isa::kScalar);
  KeepingTrace trace;
  RunTraced(w, testing::PromptTokens(3, c.vocab_size, 0x90), &trace);
  for (int layer = 0; layer < c.n_layers(); ++layer) {
    const LayerWeights& lw = w.layers[layer];
    // attn_out = RMSNorm(W_o attn) with the post-attention weight.
    std::vector<float> proj(d), want(d);
    ref::MatVec(kt, lw.wo, 0, d, q_dim, trace.At(layer, "attn", 2).data(), proj.data());
    ref::RmsNorm(kt, proj.data(), lw.post_attn_norm, 0, d, c.norm_eps, want.data());
    EXPECT_TRUE(SameBits(trace.At(layer, "attn_out", 2), want)) << "layer " << layer;
    // ffn = RMSNorm(W_down (gelu(W_gate fn) * (W_up fn))): GeGLU, then the post-FFN norm.
    const std::vector<float>& fn = trace.At(layer, "ffn_norm", 2);
    std::vector<float> g(f), u(f), h(f), y(d);
    ref::MatVec(kt, lw.ffn_gate, 0, f, d, fn.data(), g.data());
    ref::MatVec(kt, lw.ffn_up, 0, f, d, fn.data(), u.data());
    for (int i = 0; i < f; ++i) h[i] = numerics::GeluTanh(PortableMath(), g[i]) * u[i];
    ref::MatVec(kt, lw.ffn_down, 0, d, f, h.data(), y.data());
    ref::RmsNorm(kt, y.data(), lw.post_ffn_norm, 0, d, c.norm_eps, want.data());
    EXPECT_TRUE(SameBits(trace.At(layer, "ffn", 2), want)) << "layer " << layer;
  }
}

TEST(NewOpsTest, RopeFactorsDivideTheFrequencies) {
  // Factors of 2 halve every frequency: position 6 with them turns a head
  // exactly as position 3 without them (the products are exact).
  const std::vector<float> twos(4, 2.0f);
  TensorView factors;
  factors.dtype = DType::kF32;
  factors.shape = {4};
  factors.data = reinterpret_cast<const std::byte*>(twos.data());
  for (RopeStyle style : {RopeStyle::kInterleaved, RopeStyle::kNeox}) {
    float a[8], b[8];
    for (int i = 0; i < 8; ++i) a[i] = b[i] = 0.1f * static_cast<float>(i + 1);
    ref::Rope(a, 8, style, 10000.0f, 6, PortableMath(), factors);
    ref::Rope(b, 8, style, 10000.0f, 3, PortableMath(), TensorView{});
    EXPECT_EQ(std::memcmp(a, b, sizeof a), 0);
  }
  // In the model: the rope_freqs tensor is read, and changes q.
  const ModelWeights w = MakeSyntheticWeights("gemma", DType::kBF16);
  ASSERT_TRUE(w.rope_freqs.present());
  ModelWeights ones = testing::CloneWeights(w);
  auto* f = reinterpret_cast<float*>(testing::MutableBytes(ones.rope_freqs));
  for (int64_t i = 0; i < ones.rope_freqs.elements(); ++i) f[i] = 1.0f;
  KeepingTrace with, without;
  RunTraced(w, {3, 4}, &with);
  RunTraced(ones, {3, 4}, &without);
  EXPECT_TRUE(SameBits(with.At(0, "v", 1), without.At(0, "v", 1)));
  EXPECT_FALSE(SameBits(with.At(0, "q", 1), without.At(0, "q", 1)));
}

TEST(NewOpsTest, LocalLayersUseTheirOwnBase) {
  // gemma: layers 0 and 2 slide (base 1e4), layer 1 is global (base 1e6).
  // Moving the global base to 1e4 and dropping the local one leaves layer
  // 0 (local) as it was and changes layer 1 (global).
  const ModelWeights w = MakeSyntheticWeights("gemma", DType::kBF16);
  ASSERT_EQ(w.config.layer_rope_base(0), 1e4f);
  ASSERT_EQ(w.config.layer_rope_base(1), 1e6f);
  const ModelWeights one_base = WithConfig(w, [](ModelConfig& c) {
    c.rope_base = c.rope_base_local;
    c.rope_base_local = 0.0f;
  });
  KeepingTrace a, b;
  const std::vector<int32_t> tokens = {7, 8, 9};
  RunTraced(w, tokens, &a);
  RunTraced(one_base, tokens, &b);
  EXPECT_TRUE(SameBits(a.At(0, "q", 2), b.At(0, "q", 2)));
  EXPECT_TRUE(SameBits(a.At(0, "k", 2), b.At(0, "k", 2)));
  EXPECT_TRUE(SameBits(a.At(1, "attn_norm", 2), b.At(1, "attn_norm", 2)));
  EXPECT_FALSE(SameBits(a.At(1, "q", 2), b.At(1, "q", 2)));
}

}  // namespace
}  // namespace samebits::model
