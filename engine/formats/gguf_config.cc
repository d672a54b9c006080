#include "engine/formats/gguf_config.h"

#include <cmath>
#include <limits>

#include "engine/formats/architectures.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/pretokenizer_patterns.h"

namespace samebits::formats {
namespace {

bool IsInteger(GgufType t) {
  switch (t) {
    case GgufType::kU8:
    case GgufType::kI8:
    case GgufType::kU16:
    case GgufType::kI16:
    case GgufType::kU32:
    case GgufType::kI32:
    case GgufType::kU64:
    case GgufType::kI64:
      return true;
    default:
      return false;
  }
}
bool IsSigned(GgufType t) {
  return t == GgufType::kI8 || t == GgufType::kI16 || t == GgufType::kI32 || t == GgufType::kI64;
}

// Typed access to metadata with errors that name the file, key and problem.
class Meta {
 public:
  explicit Meta(const GgufFile& f) : f_(f) {}

  bool Has(const std::string& key) const { return f_.Find(key) != nullptr; }

  [[noreturn]] void Fail(const std::string& what) const {
    throw CheckpointError(f_.label + ": " + what);
  }

  const GgufValue& Need(const std::string& key) const {
    const GgufValue* v = f_.Find(key);
    if (v == nullptr) Fail("required metadata key '" + key + "' is missing");
    return *v;
  }

  // Returns an integer value in [lo, hi].
  int64_t IntValue(const std::string& key, const GgufValue& v, int64_t lo, int64_t hi) const {
    if (!IsInteger(v.type)) {
      Fail("metadata key '" + key + "' has type " + GgufTypeName(v.type) + ", expected an integer");
    }
    bool ok;
    int64_t x;
    if (IsSigned(v.type)) {
      x = v.i;
      ok = x >= lo && x <= hi;
    } else {
      ok = v.u <= static_cast<uint64_t>(hi) && static_cast<int64_t>(v.u) >= lo;
      x = static_cast<int64_t>(v.u);
    }
    if (!ok) {
      Fail("metadata key '" + key + "' is " +
           (IsSigned(v.type) ? std::to_string(v.i) : std::to_string(v.u)) + ", outside [" +
           std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return x;
  }
  int Int(const std::string& key, int lo = 1) const {
    return static_cast<int>(IntValue(key, Need(key), lo, std::numeric_limits<int32_t>::max()));
  }
  int IntOr(const std::string& key, int fallback, int lo = 0) const {
    return Has(key) ? Int(key, lo) : fallback;
  }
  float Float(const std::string& key) const {
    const GgufValue& v = Need(key);
    if (v.type != GgufType::kF32 && v.type != GgufType::kF64) {
      Fail("metadata key '" + key + "' has type " + GgufTypeName(v.type) + ", expected float32");
    }
    // Also refuses doubles beyond float's range, whose conversion is undefined.
    if (!(std::fabs(v.f) <= std::numeric_limits<float>::max())) {
      Fail("metadata key '" + key + "' is not a finite float32 value");
    }
    return static_cast<float>(v.f);
  }
  float FloatOr(const std::string& key, float fallback) const {
    return Has(key) ? Float(key) : fallback;
  }
  bool BoolOr(const std::string& key, bool fallback) const {
    if (!Has(key)) return fallback;
    const GgufValue& v = Need(key);
    if (v.type != GgufType::kBool) {
      Fail("metadata key '" + key + "' has type " + GgufTypeName(v.type) + ", expected bool");
    }
    return v.b;
  }
  std::string String(const std::string& key) const {
    const GgufValue& v = Need(key);
    if (v.type != GgufType::kString) {
      Fail("metadata key '" + key + "' has type " + GgufTypeName(v.type) + ", expected string");
    }
    return v.s;
  }
  std::string StringOr(const std::string& key, const std::string& fallback) const {
    return Has(key) ? String(key) : fallback;
  }
  // Returns the items of array `key`, checking the element type family and length.
  const std::vector<GgufValue>& Array(const std::string& key, size_t length,
                                      bool (*elem_ok)(GgufType), const char* expected) const {
    const GgufValue& v = Need(key);
    if (v.type != GgufType::kArray || !elem_ok(v.elem)) {
      Fail("metadata key '" + key + "' has type " + GgufTypeName(v.type) +
           (v.type == GgufType::kArray ? " of " + GgufTypeName(v.elem) : std::string()) +
           ", expected an array of " + expected);
    }
    if (v.items.size() != length) {
      Fail("metadata key '" + key + "' has " + std::to_string(v.items.size()) +
           " entries, expected " + std::to_string(length));
    }
    return v.items;
  }

 private:
  const GgufFile& f_;
};

bool IsIntegerType(GgufType t) {
  return IsInteger(t);
}
bool IsBoolType(GgufType t) {
  return t == GgufType::kBool;
}
bool IsBoolOrIntegerType(GgufType t) {
  return IsBoolType(t) || IsInteger(t);
}
bool IsStringType(GgufType t) {
  return t == GgufType::kString;
}
bool IsFloatType(GgufType t) {
  return t == GgufType::kF32;
}

// Returns the base name of a path, for the configuration's name.
std::string BaseName(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The steps of GgufToConfig, in the order it takes them. Each reads the keys
// of one part of the configuration; `p` is the architecture's key prefix.

// Returns the table entry of the file's architecture: one the table knows,
// or any name in a file our writer made (its samebits keys state every
// switch). Anything else is refused naming the ones the table knows.
const GgufArchitecture& ReadArchitecture(const Meta& m, model::ModelConfig& c) {
  c.arch = m.String("general.architecture");
  const GgufArchitecture* known = FindGgufArchitecture(c.arch);
  if (known != nullptr) return *known;
  if (!m.Has(kSbVersion)) {
    m.Fail("architecture '" + c.arch +
           "' is not supported (supported: " + KnownGgufArchitectures() + ")");
  }
  return kSamebitsOnlyArchitecture;
}

// Reads the widths, the layer count (bounded by the tensor table) and the
// attention heads. Returns the layer count.
int ReadShape(const Meta& m, const GgufFile& f, const std::string& p, model::ModelConfig& c) {
  c.d_model = m.Int(p + "embedding_length");
  const int n_layers = m.Int(p + "block_count");
  // Each layer needs several tensors: bound the count by the tensor table
  // before sizing anything by it.
  if (static_cast<size_t>(n_layers) > f.tensors.size()) {
    m.Fail(p + "block_count is " + std::to_string(n_layers) + " but the file has only " +
           std::to_string(f.tensors.size()) + " tensors");
  }
  c.n_heads = m.Int(p + "attention.head_count");
  c.n_kv_heads = m.IntOr(p + "attention.head_count_kv", c.n_heads, 1);
  if (m.Has(p + "attention.key_length")) {
    c.head_dim = m.Int(p + "attention.key_length");
  } else {
    if (c.d_model % c.n_heads != 0) {
      m.Fail(p + "embedding_length (" + std::to_string(c.d_model) + ") is not a multiple of " + p +
             "attention.head_count (" + std::to_string(c.n_heads) + ") and " + p +
             "attention.key_length is missing");
    }
    c.head_dim = c.d_model / c.n_heads;
  }
  if (m.Has(p + "attention.value_length") && m.Int(p + "attention.value_length") != c.head_dim) {
    m.Fail(p + "attention.value_length differs from the key length; the engine needs them equal");
  }
  return n_layers;
}

// Reads the rotary dimensions, base and style (the architecture's unless
// samebits.rope.style says otherwise).
void ReadRope(const Meta& m, const std::string& p, const GgufArchitecture& arch,
              model::ModelConfig& c) {
  const int rope_dim = m.IntOr(p + "rope.dimension_count", c.head_dim, 1);
  c.rope_dim = rope_dim == c.head_dim ? 0 : rope_dim;
  if (m.Has(kSbRopeDim)) c.rope_dim = m.Int(kSbRopeDim, 0);
  c.rope_base = m.FloatOr(p + "rope.freq_base", 10000.0f);
  c.rope_style = arch.rope_style;
  if (m.Has(kSbRopeStyle)) {
    const std::string s = m.String(kSbRopeStyle);
    if (s == "interleaved") {
      c.rope_style = model::RopeStyle::kInterleaved;
    } else if (s == "neox") {
      c.rope_style = model::RopeStyle::kNeox;
    } else {
      m.Fail(std::string(kSbRopeStyle) + " is '" + s + "' (expected 'interleaved' or 'neox')");
    }
  }
}

// Reads the norm kind and epsilon, and the per-architecture switches of the
// attention and the block.
void ReadNormAndSwitches(const Meta& m, const std::string& p, const GgufArchitecture& arch,
                         model::ModelConfig& c) {
  const std::string norm =
      m.StringOr(kSbNorm, arch.norm == model::NormKind::kLayerNorm ? "layer" : "rms");
  if (norm == "rms") {
    c.norm = model::NormKind::kRmsNorm;
    c.norm_eps = m.Float(p + "attention.layer_norm_rms_epsilon");
  } else if (norm == "layer") {
    c.norm = model::NormKind::kLayerNorm;
    c.norm_eps = m.Float(p + "attention.layer_norm_epsilon");
  } else {
    m.Fail(std::string(kSbNorm) + " is '" + norm + "' (expected 'rms' or 'layer')");
  }
  c.qk_norm = m.BoolOr(kSbQkNorm, arch.qk_norm);
  c.qkv_bias = m.BoolOr(kSbQkvBias, arch.qkv_bias);
  c.parallel_block = m.BoolOr(kSbParallel, arch.parallel_block);
  c.logit_scale = m.FloatOr(kSbLogitScale, m.FloatOr(p + "logit_scale", 1.0f));
  if (arch.gemma_block) {
    c.post_norms = true;
    c.activation = model::Activation::kGeluTanh;
    c.embedding_scale = std::sqrt(static_cast<float>(c.d_model));
    c.attn_softcap = m.FloatOr(p + "attn_logit_softcapping", 0.0f);
    c.final_softcap = m.FloatOr(p + "final_logit_softcapping", 0.0f);
  }
  if (arch.local_rope_base) c.rope_base_local = m.FloatOr(p + "rope.freq_base_swa", 10000.0f);
  c.max_seq_len = m.IntOr(p + "context_length", 4096, 1);
}

// Reads the dense FFN width and the experts.
void ReadFeedForward(const Meta& m, const std::string& p, const GgufArchitecture& arch,
                     model::ModelConfig& c) {
  c.ffn_dim = m.IntOr(p + "feed_forward_length", 0);
  c.n_experts = m.IntOr(p + "expert_count", 0);
  if (c.n_experts > 0) {
    c.top_k = m.Int(p + "expert_used_count");
    c.expert_ffn_dim = arch.expert_width_in_ffn
                           ? m.IntOr(p + "expert_feed_forward_length", c.ffn_dim, 1)
                           : m.Int(p + "expert_feed_forward_length");
    c.shared_expert_ffn_dim = m.IntOr(p + "expert_shared_feed_forward_length", 0);
    // llama.cpp renormalises the chosen experts' weights for both llama
    // (Mixtral) and qwen3moe.
    c.renormalize_top_k = m.BoolOr(kSbRenorm, m.BoolOr(p + "expert_weights_norm", true));
  }
  if (m.Has(kSbDenseFfn)) c.ffn_dim = m.Int(kSbDenseFfn, 0);
}

// Returns which layers slide, as llama.cpp decides it: the per-layer array
// `{arch}.attention.sliding_window_pattern` (bool or integer, non-zero
// slides) when the file has one; else a pattern N from that key or the
// architecture, under which layer i slides unless i % N == N - 1 (N = 0:
// every layer slides).
std::vector<bool> SlidingLayers(const Meta& m, const std::string& p, const GgufArchitecture& arch,
                                int n_layers) {
  const std::string key = p + "attention.sliding_window_pattern";
  std::vector<bool> slides(static_cast<size_t>(n_layers));
  if (m.Has(key) && m.Need(key).type == GgufType::kArray) {
    const auto& items =
        m.Array(key, static_cast<size_t>(n_layers), IsBoolOrIntegerType, "bools or integers");
    for (int i = 0; i < n_layers; ++i) {
      const GgufValue& v = items[static_cast<size_t>(i)];
      slides[static_cast<size_t>(i)] = v.type == GgufType::kBool ? v.b : m.IntValue(key, v, 0, 1);
    }
    return slides;
  }
  const int pattern = m.IntOr(key, arch.sliding_window_pattern, 0);
  for (int i = 0; i < n_layers; ++i) {
    slides[static_cast<size_t>(i)] = pattern == 0 || i % pattern != pattern - 1;
  }
  return slides;
}

// Sizes the layers, applies the architecture's sliding-window pattern, and
// reads the per-layer arrays of the samebits namespace (which override it).
void ReadLayers(const Meta& m, const std::string& p, const GgufArchitecture& arch, int n_layers,
                model::ModelConfig& c) {
  c.layers.resize(n_layers);
  for (auto& l : c.layers) l.moe = c.n_experts > 0;
  // A window of 0 slides no layer (our writer's form for such a model).
  const int window = m.IntOr(p + "attention.sliding_window", 0);
  if (arch.sliding_window_pattern > 0 && window > 0) {
    const std::vector<bool> slides = SlidingLayers(m, p, arch, n_layers);
    for (int i = 0; i < n_layers; ++i) {
      c.layers[i].sliding_window = slides[i] ? window : 0;
      if (!slides[i] && arch.global_layers_without_rope) c.layers[i].use_rope = false;
    }
  }
  if (m.Has(kSbMoe)) {
    const auto& items = m.Array(kSbMoe, n_layers, IsBoolType, "bool");
    for (int i = 0; i < n_layers; ++i) c.layers[i].moe = items[i].b;
  }
  if (m.Has(kSbUseRope)) {
    const auto& items = m.Array(kSbUseRope, n_layers, IsBoolType, "bool");
    for (int i = 0; i < n_layers; ++i) c.layers[i].use_rope = items[i].b;
  }
  if (m.Has(kSbSliding)) {
    const auto& items = m.Array(kSbSliding, n_layers, IsIntegerType, "integers");
    for (int i = 0; i < n_layers; ++i) {
      c.layers[i].sliding_window = static_cast<int>(
          m.IntValue(kSbSliding, items[i], 0, std::numeric_limits<int32_t>::max()));
    }
  }
}

// Reads what the tensor table decides: the vocabulary size (the rows of
// token_embd.weight) and whether the output is tied (no output.weight).
void ReadFromTensors(const Meta& m, const GgufFile& f, const std::string& p,
                     model::ModelConfig& c) {
  bool has_output = false;
  const GgufTensorInfo* embd = nullptr;
  for (const GgufTensorInfo& t : f.tensors) {
    if (t.name == "output.weight") has_output = true;
    if (t.name == "token_embd.weight") embd = &t;
    // Llama 3.1's rope scaling, as its converter writes it: one divisor per
    // rotary frequency.
    if (t.name == "rope_freqs.weight") c.rope_freq_factors = true;
  }
  c.tied_output = !has_output;
  if (embd == nullptr) m.Fail("required tensor 'token_embd.weight' is missing");
  if (embd->ne.size() != 2 ||
      embd->ne[1] > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    m.Fail("tensor 'token_embd.weight' is not a [vocab, d_model] matrix");
  }
  c.vocab_size = static_cast<int>(embd->ne[1]);
  if (m.Has(p + "vocab_size") && m.Int(p + "vocab_size") != c.vocab_size) {
    m.Fail(p + "vocab_size (" + std::to_string(m.Int(p + "vocab_size")) +
           ") differs from the rows of token_embd.weight (" + std::to_string(c.vocab_size) + ")");
  }
}

}  // namespace

model::ModelConfig GgufToConfig(const GgufFile& f) {
  const Meta m(f);
  model::ModelConfig c;
  const GgufArchitecture& arch = ReadArchitecture(m, c);
  c.name = m.StringOr(kSbName, BaseName(f.label));
  const std::string p = c.arch + ".";
  const int n_layers = ReadShape(m, f, p, c);
  ReadRope(m, p, arch, c);
  ReadNormAndSwitches(m, p, arch, c);
  ReadFeedForward(m, p, arch, c);
  ReadLayers(m, p, arch, n_layers, c);
  ReadFromTensors(m, f, p, c);
  return c;
}

std::shared_ptr<const Vocabulary> GgufVocabulary(const GgufFile& f, int vocab_size) {
  const Meta m(f);
  if (!m.Has("tokenizer.ggml.model")) return nullptr;
  const std::string model = m.String("tokenizer.ggml.model");
  VocabularyOptions options;
  if (model == "llama") {
    options.model = TokenizerModel::kSentencePiece;
  } else if (model == "gpt2") {
    options.model = TokenizerModel::kBytePairEncoding;
  } else {
    return nullptr;  // no vocabulary ("no_vocab") or one this engine cannot tokenize with
  }
  const GgufValue& tokens_value = m.Need("tokenizer.ggml.tokens");
  const size_t n = tokens_value.items.size();
  const auto& tokens = m.Array("tokenizer.ggml.tokens", n, IsStringType, "string");
  if (vocab_size >= 0 && n != static_cast<size_t>(vocab_size)) {
    m.Fail("tokenizer.ggml.tokens has " + std::to_string(n) + " pieces but the model has " +
           std::to_string(vocab_size) + " token rows");
  }
  if (n == 0 || n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    m.Fail("tokenizer.ggml.tokens has " + std::to_string(n) + " pieces");
  }
  const int64_t last_id = static_cast<int64_t>(n) - 1;
  std::vector<Piece> pieces(n);
  for (size_t i = 0; i < n; ++i) pieces[i].text = tokens[i].s;
  if (m.Has("tokenizer.ggml.scores")) {
    const auto& scores = m.Array("tokenizer.ggml.scores", n, IsFloatType, "float32");
    for (size_t i = 0; i < n; ++i) pieces[i].score = static_cast<float>(scores[i].f);
  }
  if (m.Has("tokenizer.ggml.token_type")) {
    const auto& types = m.Array("tokenizer.ggml.token_type", n, IsIntegerType, "int32");
    for (size_t i = 0; i < n; ++i) {
      pieces[i].type =
          static_cast<PieceType>(m.IntValue("tokenizer.ggml.token_type", types[i], 0, 6));
    }
  }
  const auto id_or_none = [&](const std::string& key) {
    // llama.cpp writes "none" as 0xFFFFFFFF in some files (seperator, padding).
    return m.Has(key) ? static_cast<int32_t>(m.IntValue(key, m.Need(key), 0, last_id)) : -1;
  };
  options.bos_id = id_or_none("tokenizer.ggml.bos_token_id");
  options.eos_id = id_or_none("tokenizer.ggml.eos_token_id");
  if (m.Has("tokenizer.ggml.add_bos_token"))
    options.add_bos = m.BoolOr("tokenizer.ggml.add_bos_token", true);
  if (options.model == TokenizerModel::kSentencePiece) {
    options.add_space_prefix = m.BoolOr("tokenizer.ggml.add_space_prefix", true);
  } else {
    options.add_space_prefix = false;
    options.pre = m.StringOr("tokenizer.ggml.pre", "default");
    // A model whose pre-tokenizer this engine does not know still loads
    // (for token and random scenarios), without a vocabulary; a file read
    // for its vocabulary alone says why it has none (BpeTokenizer).
    if (vocab_size >= 0 && FindPreTokenizer(options.pre) == nullptr) return nullptr;
    const GgufValue& merges_value = m.Need("tokenizer.ggml.merges");
    const auto& merges =
        m.Array("tokenizer.ggml.merges", merges_value.items.size(), IsStringType, "string");
    options.merges.reserve(merges.size());
    for (const GgufValue& v : merges) options.merges.push_back(v.s);
  }
  if (options.add_bos.value_or(false) && options.bos_id < 0) {
    m.Fail("tokenizer.ggml.add_bos_token is true but tokenizer.ggml.bos_token_id is missing");
  }
  return std::make_shared<const Vocabulary>(std::move(pieces), std::move(options), f.label);
}

}  // namespace samebits::formats
