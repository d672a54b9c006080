#include "engine/formats/gguf_writer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>

#include "engine/formats/architectures.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/gguf.h"
#include "engine/formats/gguf_config.h"
#include "engine/formats/vocabulary.h"
#include "engine/model/tensor_spec.h"

namespace samebits::formats {
namespace {

constexpr uint64_t kAlignment = 32;

// Appends little-endian GGUF encodings to a byte buffer.
class Out {
 public:
  void U8(uint8_t v) { b_.push_back(static_cast<std::byte>(v)); }
  void U32(uint32_t v) {
    for (int i = 0; i < 4; ++i) U8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) U8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void Str(const std::string& s) {
    U64(s.size());
    for (char c : s) U8(static_cast<uint8_t>(c));
  }
  void Key(const std::string& key, GgufType type) {
    Str(key);
    U32(static_cast<uint32_t>(type));
    ++n_kv_;
  }
  void KvU32(const std::string& k, uint32_t v) {
    Key(k, GgufType::kU32);
    U32(v);
  }
  void KvI32(const std::string& k, int32_t v) {
    Key(k, GgufType::kI32);
    U32(static_cast<uint32_t>(v));
  }
  void KvF32(const std::string& k, float v) {
    Key(k, GgufType::kF32);
    U32(std::bit_cast<uint32_t>(v));
  }
  void KvBool(const std::string& k, bool v) {
    Key(k, GgufType::kBool);
    U8(v ? 1 : 0);
  }
  void KvStr(const std::string& k, const std::string& v) {
    Key(k, GgufType::kString);
    Str(v);
  }
  void ArrayHead(const std::string& k, GgufType elem, uint64_t n) {
    Key(k, GgufType::kArray);
    U32(static_cast<uint32_t>(elem));
    U64(n);
  }
  void Pad(uint64_t alignment) {
    while (b_.size() % alignment != 0) U8(0);
  }
  std::vector<std::byte>& bytes() { return b_; }
  const std::vector<std::byte>& bytes() const { return b_; }
  uint64_t n_kv() const { return n_kv_; }

 private:
  std::vector<std::byte> b_;
  uint64_t n_kv_ = 0;
};

uint32_t GgmlType(const model::TensorView& v) {
  if (v.quantized) return numerics::LayoutOf(v.quant_type).ggml_type;
  switch (v.dtype) {
    case model::DType::kF32:
      return kGgmlF32;
    case model::DType::kF16:
      return kGgmlF16;
    case model::DType::kBF16:
      return kGgmlBF16;
  }
  return kGgmlF32;
}

// Returns the size of a tensor as stored: its blocks when quantized.
size_t StoredBytes(const model::TensorView& v) {
  return v.quantized ? v.quant_bytes() : v.bytes();
}

// Returns a piece in GGUF's spelling: llama2.c stores spaces where
// SentencePiece (and GGUF) store `▁`.
std::string GgufPieceText(const Piece& p) {
  if (p.type == PieceType::kByte || p.type == PieceType::kControl) return p.text;
  std::string s;
  for (char c : p.text) {
    if (c == ' ') {
      s += "\xE2\x96\x81";
    } else {
      s.push_back(c);
    }
  }
  return s;
}

bool AnyQuantized(const model::ModelWeights& weights) {
  bool any = false;
  model::ModelWeights& w = const_cast<model::ModelWeights&>(weights);  // slots only read here
  model::ForEachTensor(w.config, [&](const model::TensorSpec& spec) {
    if (spec.layer < static_cast<int>(w.layers.size()) && spec.slot(w).quantized) any = true;
  });
  return any;
}

// Writes llama.cpp's keys: general.*, then `{arch}.*`.
void WriteModelKeys(const model::ModelWeights& w, Out& kv) {
  const model::ModelConfig& c = w.config;
  const std::string arch = c.arch.empty() ? "llama" : c.arch;
  const std::string p = arch + ".";
  const bool experts = c.n_experts > 0;
  kv.KvStr("general.architecture", arch);
  kv.KvStr("general.name", c.name);
  const model::TensorView& main = w.token_embedding;
  kv.KvU32("general.file_type", main.quantized ? numerics::LayoutOf(main.quant_type).file_type
                                : main.dtype == model::DType::kF32 ? 0
                                : main.dtype == model::DType::kF16 ? 1
                                                                   : 32);
  if (AnyQuantized(w)) kv.KvU32("general.quantization_version", 2);
  kv.KvU32(p + "context_length", static_cast<uint32_t>(c.max_seq_len));
  kv.KvU32(p + "embedding_length", static_cast<uint32_t>(c.d_model));
  kv.KvU32(p + "block_count", static_cast<uint32_t>(c.n_layers()));
  // llama.cpp's Mixtral-style `llama` reads the expert width from here.
  const GgufArchitecture* known = FindGgufArchitecture(arch);
  const bool expert_width_in_ffn = experts && known != nullptr && known->expert_width_in_ffn;
  kv.KvU32(p + "feed_forward_length",
           static_cast<uint32_t>(expert_width_in_ffn ? c.expert_ffn_dim : c.ffn_dim));
  kv.KvU32(p + "attention.head_count", static_cast<uint32_t>(c.n_heads));
  kv.KvU32(p + "attention.head_count_kv", static_cast<uint32_t>(c.n_kv_heads));
  kv.KvU32(p + "attention.key_length", static_cast<uint32_t>(c.head_dim));
  kv.KvU32(p + "attention.value_length", static_cast<uint32_t>(c.head_dim));
  if (c.norm == model::NormKind::kLayerNorm) {
    kv.KvF32(p + "attention.layer_norm_epsilon", c.norm_eps);
  } else {
    kv.KvF32(p + "attention.layer_norm_rms_epsilon", c.norm_eps);
  }
  kv.KvF32(p + "rope.freq_base", c.rope_base);
  kv.KvU32(p + "rope.dimension_count", static_cast<uint32_t>(c.rotary_dim()));
  kv.KvU32(p + "vocab_size", static_cast<uint32_t>(c.vocab_size));
  // Gemma 2/3: the reader takes the soft-caps and the local RoPE base from
  // these keys of the architectures that imply them (GgufUnwritableSwitches
  // refuses them on any other).
  if (c.attn_softcap != 0.0f) kv.KvF32(p + "attn_logit_softcapping", c.attn_softcap);
  if (c.final_softcap != 0.0f) kv.KvF32(p + "final_logit_softcapping", c.final_softcap);
  if (c.rope_base_local != 0.0f) kv.KvF32(p + "rope.freq_base_swa", c.rope_base_local);
  // Cohere2's loader requires the key even at 1.
  if (c.logit_scale != 1.0f || (known != nullptr && known->parallel_block)) {
    kv.KvF32(p + "logit_scale", c.logit_scale);
  }
  // Sliding windows as llama.cpp reads them for the architectures that have
  // them: one window, and which layers slide as a per-layer array (which it
  // takes before its architecture's fixed pattern), so any layout is read
  // as written. GgufUnwritableSwitches refuses layouts this cannot say.
  if (known != nullptr && known->sliding_window_pattern > 0) {
    kv.KvU32(p + "attention.sliding_window", static_cast<uint32_t>(SharedSlidingWindow(c)));
    kv.ArrayHead(p + "attention.sliding_window_pattern", GgufType::kBool, c.layers.size());
    for (const auto& l : c.layers) kv.U8(l.sliding_window > 0 ? 1 : 0);
  }
  if (experts) {
    kv.KvU32(p + "expert_count", static_cast<uint32_t>(c.n_experts));
    kv.KvU32(p + "expert_used_count", static_cast<uint32_t>(c.top_k));
    kv.KvU32(p + "expert_feed_forward_length", static_cast<uint32_t>(c.expert_ffn_dim));
    if (c.shared_expert_ffn_dim > 0) {
      kv.KvU32(p + "expert_shared_feed_forward_length",
               static_cast<uint32_t>(c.shared_expert_ffn_dim));
    }
  }
}

// Writes the samebits namespace: only this engine reads it.
void WriteSamebitsKeys(const model::ModelConfig& c, Out& kv) {
  kv.KvU32(kSbVersion, 1);
  kv.KvStr(kSbName, c.name);
  kv.KvStr(kSbRopeStyle, c.rope_style == model::RopeStyle::kNeox ? "neox" : "interleaved");
  kv.KvI32(kSbRopeDim, c.rope_dim);
  kv.KvStr(kSbNorm, c.norm == model::NormKind::kLayerNorm ? "layer" : "rms");
  kv.KvBool(kSbQkNorm, c.qk_norm);
  kv.KvBool(kSbQkvBias, c.qkv_bias);
  kv.KvBool(kSbParallel, c.parallel_block);
  kv.KvF32(kSbLogitScale, c.logit_scale);
  kv.KvU32(kSbDenseFfn, static_cast<uint32_t>(c.ffn_dim));
  kv.KvBool(kSbRenorm, c.renormalize_top_k);
  kv.ArrayHead(kSbSliding, GgufType::kI32, c.layers.size());
  for (const auto& l : c.layers) kv.U32(static_cast<uint32_t>(l.sliding_window));
  kv.ArrayHead(kSbUseRope, GgufType::kBool, c.layers.size());
  for (const auto& l : c.layers) kv.U8(l.use_rope ? 1 : 0);
  kv.ArrayHead(kSbMoe, GgufType::kBool, c.layers.size());
  for (const auto& l : c.layers) kv.U8(l.moe ? 1 : 0);
}

// Writes the vocabulary's tokenizer.ggml.* keys, or llama.cpp's marker for
// a model without one.
void WriteVocabularyKeys(const model::ModelWeights& w, Out& kv) {
  if (w.vocabulary) {
    const Vocabulary& v = *w.vocabulary;
    const VocabularyOptions& o = v.options();
    const bool bpe = o.model == TokenizerModel::kBytePairEncoding;
    kv.KvStr("tokenizer.ggml.model", bpe ? "gpt2" : "llama");
    if (bpe) kv.KvStr("tokenizer.ggml.pre", o.pre);
    kv.ArrayHead("tokenizer.ggml.tokens", GgufType::kString, v.size());
    for (const Piece& piece : v.pieces()) kv.Str(bpe ? piece.text : GgufPieceText(piece));
    kv.ArrayHead("tokenizer.ggml.scores", GgufType::kF32, v.size());
    for (const Piece& piece : v.pieces()) kv.U32(std::bit_cast<uint32_t>(piece.score));
    kv.ArrayHead("tokenizer.ggml.token_type", GgufType::kI32, v.size());
    for (const Piece& piece : v.pieces()) kv.U32(static_cast<uint32_t>(piece.type));
    if (v.bos_id() >= 0) kv.KvU32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(v.bos_id()));
    if (v.eos_id() >= 0) kv.KvU32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(v.eos_id()));
    if (o.add_bos) kv.KvBool("tokenizer.ggml.add_bos_token", *o.add_bos);
    if (bpe) {
      kv.ArrayHead("tokenizer.ggml.merges", GgufType::kString, o.merges.size());
      for (const std::string& m : o.merges) kv.Str(m);
    } else if (!o.add_space_prefix) {
      kv.KvBool("tokenizer.ggml.add_space_prefix", false);
    }
  } else {
    // llama.cpp's marker for a model without a vocabulary, which it loads.
    kv.KvStr("tokenizer.ggml.model", "no_vocab");
  }
}

void WriteMetadata(const model::ModelWeights& w, Out& kv) {
  WriteModelKeys(w, kv);
  WriteSamebitsKeys(w.config, kv);
  WriteVocabularyKeys(w, kv);
}

}  // namespace

int SharedSlidingWindow(const model::ModelConfig& c) {
  for (const auto& l : c.layers) {
    if (l.sliding_window > 0) return l.sliding_window;
  }
  return 0;
}

std::string GgufUnwritableSwitches(const model::ModelConfig& c) {
  // What the reader implies for this architecture name (GgufToConfig): a
  // name the table does not know implies none of the Gemma operations.
  const GgufArchitecture* known = FindGgufArchitecture(c.arch.empty() ? "llama" : c.arch);
  const GgufArchitecture& arch = known != nullptr ? *known : kSamebitsOnlyArchitecture;
  const bool gemma = arch.gemma_block;
  std::string names;
  const auto add = [&](bool unwritable, const char* name) {
    if (unwritable) names += (names.empty() ? "" : ", ") + std::string(name);
  };
  add(c.post_norms != gemma, "post_norms");
  add(!gemma && c.attn_softcap != 0.0f, "attn_softcap");
  add(!gemma && c.final_softcap != 0.0f, "final_softcap");
  add(c.embedding_scale != (gemma ? std::sqrt(static_cast<float>(c.d_model)) : 1.0f),
      "embedding_scale");
  add(c.activation != (gemma ? model::Activation::kGeluTanh : model::Activation::kSilu),
      "GELU activation");
  // Without the key the reader takes llama.cpp's default 1e4 on these.
  add(arch.local_rope_base ? c.rope_base_local == 0.0f : c.rope_base_local != 0.0f,
      "rope_base_local");
  // llama.cpp's sliding layers share one window; Cohere2's global layers
  // (those that do not slide) are the ones without RoPE.
  if (arch.sliding_window_pattern > 0) {
    const int window = SharedSlidingWindow(c);
    add(std::any_of(
            c.layers.begin(), c.layers.end(),
            [&](const auto& l) { return l.sliding_window != 0 && l.sliding_window != window; }),
        "sliding windows of different widths");
    add(arch.global_layers_without_rope &&
            std::any_of(c.layers.begin(), c.layers.end(),
                        [](const auto& l) { return l.use_rope != (l.sliding_window > 0); }),
        "RoPE on a global layer or none on a sliding one");
  }
  return names;
}

namespace {

// A tensor of the file: one view, or (fused) several of one type whose
// rows follow each other.
struct FileTensor {
  std::string name;
  std::vector<model::TensorView> parts;
  std::vector<int64_t> shape;
  uint64_t offset;
};

// The file's tensors in order, each at its aligned offset in the data.
class FileTensors {
 public:
  void Add(const std::string& name, std::vector<model::TensorView> parts) {
    std::vector<int64_t> shape = parts[0].shape;
    uint64_t bytes = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i > 0) shape[0] += parts[i].shape[0];
      bytes += StoredBytes(parts[i]);
    }
    tensors_.push_back({name, std::move(parts), std::move(shape), offset_});
    offset_ += (bytes + kAlignment - 1) / kAlignment * kAlignment;
  }
  const std::vector<FileTensor>& tensors() const { return tensors_; }

 private:
  std::vector<FileTensor> tensors_;
  uint64_t offset_ = 0;
};

// Adds an expert tensor as one tensor, or (per_expert_tensors) one per
// expert, as older Mixtral files hold them.
void AddExperts(const model::TensorSpec& spec, const model::TensorView& v,
                const GgufWriteOptions& options, FileTensors& tensors) {
  const std::string exps = "_exps.weight";
  const bool split = options.per_expert_tensors && v.shape.size() == 3 &&
                     spec.name.size() > exps.size() && spec.name.ends_with(exps);
  if (!split) {
    tensors.Add(spec.name, {v});
    return;
  }
  if (v.quantized) {
    throw CheckpointError("cannot write '" + spec.name +
                          "' per expert: it is quantized; write merged expert tensors");
  }
  const std::string stem = spec.name.substr(0, spec.name.size() - exps.size());
  const size_t stride = v.bytes() / static_cast<size_t>(v.shape[0]);
  for (int64_t e = 0; e < v.shape[0]; ++e) {
    tensors.Add(stem + "." + std::to_string(e) + ".weight",
                {model::TensorView{v.dtype, {v.shape[1], v.shape[2]}, v.data + e * stride}});
  }
}

// Lists the tensors the file holds, in the order of model::ForEachTensor,
// fusing gate and up where the architecture's files do (Phi-3).
FileTensors ListFileTensors(const model::ModelWeights& weights, const GgufWriteOptions& options) {
  FileTensors tensors;
  const GgufArchitecture* known =
      FindGgufArchitecture(weights.config.arch.empty() ? "llama" : weights.config.arch);
  const bool fuse_gate_up = known != nullptr && known->fused_gate_up;
  const model::TensorView* pending_gate = nullptr;  // a gate waiting for its up (fuse_gate_up)
  model::ModelWeights& w = const_cast<model::ModelWeights&>(weights);  // slots only read here
  model::ForEachTensor(weights.config, [&](const model::TensorSpec& spec) {
    if (spec.layer >= static_cast<int>(w.layers.size())) return;
    const model::TensorView& v = spec.slot(w);
    if (!v.present()) return;
    if (fuse_gate_up && spec.name.ends_with(".ffn_gate.weight")) {
      pending_gate = &v;
      return;
    }
    if (pending_gate != nullptr && spec.name.ends_with(".ffn_up.weight")) {
      if (GgmlType(*pending_gate) != GgmlType(v)) {
        throw CheckpointError("cannot write '" + spec.name + "' fused with its gate, as " +
                              weights.config.arch +
                              " files hold them: the two are stored in different types");
      }
      tensors.Add(spec.name, {*pending_gate, v});
      pending_gate = nullptr;
      return;
    }
    AddExperts(spec, v, options, tensors);
  });
  if (pending_gate != nullptr) {
    throw CheckpointError("cannot write a gate projection without its up projection fused to it");
  }
  return tensors;
}

// The magic, version, counts, metadata and tensor infos, padded to the data.
void WriteHeader(const Out& kv, const std::vector<FileTensor>& tensors, Out& out) {
  out.U8('G');
  out.U8('G');
  out.U8('U');
  out.U8('F');
  out.U32(3);
  out.U64(tensors.size());
  out.U64(kv.n_kv());
  out.bytes().insert(out.bytes().end(), kv.bytes().begin(), kv.bytes().end());
  for (const FileTensor& t : tensors) {
    out.Str(t.name);
    out.U32(static_cast<uint32_t>(t.shape.size()));
    for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it)
      out.U64(static_cast<uint64_t>(*it));
    out.U32(GgmlType(t.parts[0]));
    out.U64(t.offset);
  }
  out.Pad(kAlignment);
}

void WriteTensorData(const std::vector<FileTensor>& tensors, Out& out) {
  std::vector<std::byte> scratch;
  for (const FileTensor& t : tensors) {
    for (const model::TensorView& part : t.parts) {
      if (part.quantized) {
        // Blocks are bytes in the file's order already (F16 scales inside
        // them are little-endian as ggml writes them).
        out.bytes().insert(out.bytes().end(), part.quant_blocks,
                           part.quant_blocks + StoredBytes(part));
      } else {
        const std::span<const std::byte> le = model::LittleEndianBytes(part, scratch);
        out.bytes().insert(out.bytes().end(), le.begin(), le.end());
      }
    }
    out.Pad(kAlignment);
  }
}

}  // namespace

std::vector<std::byte> GgufBytes(const model::ModelWeights& weights,
                                 const GgufWriteOptions& options) {
  Out kv;
  WriteMetadata(weights, kv);
  const FileTensors tensors = ListFileTensors(weights, options);
  Out out;
  WriteHeader(kv, tensors.tensors(), out);
  WriteTensorData(tensors.tensors(), out);
  return std::move(out.bytes());
}

void WriteGguf(const model::ModelWeights& weights, const std::string& path,
               const GgufWriteOptions& options) {
  const std::vector<std::byte> bytes = GgufBytes(weights, options);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw CheckpointError(path + ": cannot create the file");
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw CheckpointError(path + ": write failed");
}

}  // namespace samebits::formats
