// Synthetic checkpoints. The generator is counter-based and integer-only up
// to one exact conversion and one IEEE multiplication per element, so every
// platform produces the same bits and no element depends on another:
//
//   key(t)      = splitmix64(seed ^ splitmix64(t))        t: tensor index in
//                                                          ForEachTensor order
//   h(t, j)     = splitmix64(key(t) + j)                   j = i / 2, i: element
//   u(t, i)     = 24 bits of h(t, i / 2) - 2^23            bits 40..63 for even i,
//                                                          bits 16..39 for odd i
//   value(t, i) = ((float)u * 2^-23) * scale(t) + offset(t)
//
// `(float)u * 2^-23` is exact and lies in [-1, 1). `scale(t)` is
// sqrtf(3 / fan_in) for matrices (unit output variance for unit input
// variance; sqrtf is correctly rounded everywhere), so activations stay of
// order one through the layers (the embedding too); norm weights are
// 1 + 0.25 u, norm biases 0.125 u, and the router 4 sqrtf(3 / d_model) u so
// that routing is decisive.
// The value is then rounded to the requested dtype (RNE) for matrices and
// the embedding; norms and the router stay F32.
#include "engine/model/synthetic.h"

#include <cmath>
#include <cstring>
#include <new>
#include <stdexcept>

#include "engine/model/tensor_spec.h"
#include "engine/numerics/half.h"
#include "engine/numerics/splitmix.h"
#include "engine/platform/weight_memory.h"

namespace samebits::model {
namespace {

// Returns a 24-bit field of `h` as an exact float in [-1, 1).
inline float Unit(uint64_t h, int shift) {
  const int32_t u = static_cast<int32_t>((h >> shift) & 0xffffffu) - (1 << 23);
  return static_cast<float>(u) * 0x1p-23f;
}

// Writes elements [0, n) of a tensor as `convert(unit * scale + offset)`.
// One hash feeds two elements, which halves the cost of generating `bench`.
template <typename T, typename Convert>
void Fill(T* out, int64_t n, uint64_t key, float scale, float offset, Convert convert) {
  for (int64_t i = 0; i < n; i += 2) {
    const uint64_t h = numerics::SplitMix64(key + static_cast<uint64_t>(i / 2));
    out[i] = convert(Unit(h, 40) * scale + offset);
    if (i + 1 < n) out[i + 1] = convert(Unit(h, 16) * scale + offset);
  }
}

// The shape `tiny` and `gemma` share: a vocabulary of 256, d_model 64, four
// query heads over two key/value heads of 16, RMSNorm with QK-norm and NeoX
// rope, 128 positions.
void SetTinyAttention(ModelConfig& c) {
  c.vocab_size = 256;
  c.d_model = 64;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.head_dim = 16;
  c.norm = NormKind::kRmsNorm;
  c.norm_eps = 1e-6f;
  c.rope_style = RopeStyle::kNeox;
  c.qk_norm = true;
  c.max_seq_len = 128;
}

ModelConfig Tiny() {
  ModelConfig c;
  c.name = "synthetic:tiny";
  c.arch = "qwen3moe";
  SetTinyAttention(c);
  c.rope_base = 10000.0f;
  c.rope_dim = 8;  // partial rotary: half of each head is rotated
  c.n_experts = 4;
  c.top_k = 2;
  c.expert_ffn_dim = 64;
  c.renormalize_top_k = true;
  c.shared_expert_ffn_dim = 32;
  c.tied_output = false;
  c.layers = {{.sliding_window = 8, .use_rope = true, .moe = true},
              {.sliding_window = 0, .use_rope = true, .moe = true}};
  return c;
}

ModelConfig Medium() {
  ModelConfig c;
  c.name = "synthetic:medium";
  c.arch = "cohere2";
  c.vocab_size = 4096;
  c.d_model = 256;
  c.n_heads = 8;
  c.n_kv_heads = 2;
  c.head_dim = 32;
  c.norm = NormKind::kLayerNorm;
  c.norm_eps = 1e-5f;
  c.rope_style = RopeStyle::kInterleaved;
  c.rope_base = 10000.0f;
  c.parallel_block = true;
  c.ffn_dim = 512;
  c.n_experts = 8;
  c.top_k = 2;
  c.expert_ffn_dim = 256;
  c.renormalize_top_k = false;
  c.tied_output = true;
  c.logit_scale = 0.25f;
  c.max_seq_len = 512;
  c.layers = {{.sliding_window = 64, .use_rope = true, .moe = true},
              {.sliding_window = 64, .use_rope = true, .moe = false},
              {.sliding_window = 64, .use_rope = true, .moe = true},
              {.sliding_window = 0, .use_rope = false, .moe = true}};
  return c;
}

ModelConfig Wide() {
  ModelConfig c;
  c.name = "synthetic:wide";
  c.arch = "llama";
  c.vocab_size = 32000;
  c.d_model = 1024;
  c.n_heads = 16;
  c.n_kv_heads = 4;
  c.head_dim = 64;
  c.norm_eps = 1e-5f;
  c.rope_style = RopeStyle::kInterleaved;
  c.rope_base = 10000.0f;
  c.n_experts = 8;
  c.top_k = 2;
  c.expert_ffn_dim = 1024;
  c.renormalize_top_k = true;
  c.tied_output = true;
  c.max_seq_len = 2048;
  c.layers = {{.moe = true}, {.moe = true}};
  return c;
}

ModelConfig Bench() {
  ModelConfig c;
  c.name = "synthetic:bench";
  c.arch = "qwen3moe";
  c.vocab_size = 32000;
  c.d_model = 1024;
  c.n_heads = 16;
  c.n_kv_heads = 4;
  c.head_dim = 64;
  c.norm_eps = 1e-6f;
  c.rope_style = RopeStyle::kNeox;
  c.rope_base = 1e6f;
  c.qk_norm = true;
  c.n_experts = 8;
  c.top_k = 2;
  c.expert_ffn_dim = 1024;
  c.renormalize_top_k = true;
  c.tied_output = false;
  c.max_seq_len = 4096;
  c.layers.assign(8, LayerConfig{.moe = true});
  return c;
}

// Gemma-like (Gemma 2 and 3 at once, with Llama 3.1's frequency factors):
// every operation those families added, on a model as small as `tiny`.
ModelConfig Gemma() {
  ModelConfig c;
  c.name = "synthetic:gemma";
  c.arch = "gemma3";
  SetTinyAttention(c);
  c.rope_base = 1e6f;
  c.rope_base_local = 10000.0f;
  c.rope_freq_factors = true;
  c.post_norms = true;
  // Caps of the order of the synthetic scores and logits, so that tanh bends them.
  c.attn_softcap = 4.0f;
  c.final_softcap = 6.0f;
  c.embedding_scale = 8.0f;  // sqrt(d_model), as Gemma
  c.activation = Activation::kGeluTanh;
  c.ffn_dim = 128;
  c.tied_output = true;
  c.layers = {{.sliding_window = 8}, {.sliding_window = 0}, {.sliding_window = 8}};
  return c;
}

// Returns the generator's scale and offset for a tensor.
void ScaleFor(const TensorSpec& spec, float* scale, float* offset) {
  *offset = 0.0f;
  switch (spec.kind) {
    case TensorKind::kEmbedding:
      // Like a projection of fan-in d_model: with a tied output the logit
      // of the current token would otherwise dominate and the synthetic
      // model would only repeat its input.
      *scale = std::sqrt(3.0f / static_cast<float>(spec.shape.back()));
      return;
    case TensorKind::kNorm: {
      const bool bias = spec.name.ends_with(".bias");
      *scale = bias ? 0.125f : 0.25f;
      *offset = bias ? 0.0f : 1.0f;
      return;
    }
    case TensorKind::kRouter:
      // A wider spread than a projection, so routing is decisive.
      *scale = 4.0f * std::sqrt(3.0f / static_cast<float>(spec.shape.back()));
      return;
    case TensorKind::kMatrix:
      *scale = std::sqrt(3.0f / static_cast<float>(spec.shape.back()));
      return;
  }
}

inline int64_t RoundUp64(int64_t n) {
  return (n + 63) & ~int64_t{63};
}

}  // namespace

std::vector<std::string> SyntheticNames() {
  return {"tiny", "gemma", "medium", "wide", "bench"};
}

ModelConfig SyntheticConfig(const std::string& name) {
  if (name == "tiny") return Tiny();
  if (name == "gemma") return Gemma();
  if (name == "medium") return Medium();
  if (name == "wide") return Wide();
  if (name == "bench") return Bench();
  throw std::invalid_argument("unknown synthetic checkpoint '" + name +
                              "'; the synthetic shapes are tiny, gemma, medium, wide and bench");
}

ModelWeights MakeSyntheticWeights(const std::string& name, DType dtype, uint64_t seed) {
  ModelWeights w;
  w.config = SyntheticConfig(name);
  w.layers.resize(w.config.layers.size());

  // First pass: lay the tensors out in one buffer, each 64-byte aligned.
  auto dtype_of = [dtype](const TensorSpec& s) {
    return (s.kind == TensorKind::kMatrix || s.kind == TensorKind::kEmbedding) ? dtype
                                                                               : DType::kF32;
  };
  int64_t total = 0;
  ForEachTensor(w.config, [&](const TensorSpec& s) {
    int64_t n = 1;
    for (int64_t dim : s.shape) n *= dim;
    total += RoundUp64(n * numerics::DTypeSize(dtype_of(s)));
  });
  // Huge pages where the kernel gives them: decode streams all of it.
  std::shared_ptr<void> memory = platform::AllocateWeightMemory(static_cast<size_t>(total));
  std::byte* base = static_cast<std::byte*>(memory.get());
  w.storage = std::move(memory);

  // Second pass: generate every tensor straight into its place.
  int64_t offset = 0;
  uint64_t tensor_index = 0;
  ForEachTensor(w.config, [&](const TensorSpec& s) {
    const DType dt = dtype_of(s);
    int64_t n = 1;
    for (int64_t dim : s.shape) n *= dim;
    std::byte* out = base + offset;
    offset += RoundUp64(n * numerics::DTypeSize(dt));

    float scale = 1.0f, bias = 0.0f;
    ScaleFor(s, &scale, &bias);
    const uint64_t key = numerics::SplitMix64(seed ^ numerics::SplitMix64(tensor_index++));
    switch (dt) {
      case DType::kF32:
        Fill(reinterpret_cast<float*>(out), n, key, scale, bias, [](float v) { return v; });
        break;
      case DType::kBF16:
        Fill(reinterpret_cast<numerics::BF16*>(out), n, key, scale, bias, numerics::ToBF16);
        break;
      case DType::kF16:
        Fill(reinterpret_cast<numerics::F16*>(out), n, key, scale, bias, numerics::ToF16);
        break;
    }
    TensorView& view = s.slot(w);
    view.dtype = dt;
    view.shape = s.shape;
    view.data = out;
  });
  return w;
}

}  // namespace samebits::model
