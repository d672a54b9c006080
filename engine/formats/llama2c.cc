#include "engine/formats/llama2c.h"

#include <filesystem>

#include "engine/formats/byte_reader.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/mapped_file.h"
#include "engine/formats/tensor_table.h"
#include "engine/formats/vocabulary.h"

namespace samebits::formats {

namespace {

// run.c's `Config`, the seven int32 of the file's header.
struct Header {
  int32_t dim, hidden, n_layers, n_heads, n_kv_heads, vocab_signed, seq_len;
  bool shared() const { return vocab_signed > 0; }  // a negative vocab_size: a classifier follows
  int32_t vocab() const { return shared() ? vocab_signed : -vocab_signed; }
  int32_t head_size() const { return dim / n_heads; }
};

// Reads the header and checks every field is usable.
Header ReadHeader(ByteReader& r) {
  Header h;
  h.dim = r.I32("dim");
  h.hidden = r.I32("hidden_dim");
  h.n_layers = r.I32("n_layers");
  h.n_heads = r.I32("n_heads");
  h.n_kv_heads = r.I32("n_kv_heads");
  h.vocab_signed = r.I32("vocab_size");
  h.seq_len = r.I32("seq_len");
  auto positive = [&](int32_t v, const char* name) {
    if (v <= 0)
      r.Fail(std::string("header field ") + name + " is " + std::to_string(v) + ", not positive");
  };
  positive(h.dim, "dim");
  positive(h.hidden, "hidden_dim");
  positive(h.n_layers, "n_layers");
  positive(h.n_heads, "n_heads");
  positive(h.n_kv_heads, "n_kv_heads");
  positive(h.seq_len, "seq_len");
  if (h.vocab_signed == 0 || h.vocab_signed == INT32_MIN)
    r.Fail("header field vocab_size is " + std::to_string(h.vocab_signed));
  if (h.dim % h.n_heads != 0) {
    r.Fail("dim (" + std::to_string(h.dim) + ") is not a multiple of n_heads (" +
           std::to_string(h.n_heads) + ")");
  }
  return h;
}

// Returns the configuration run.c implies for the header, checked. The
// layer count is bounded by the bytes left before anything is sized by it.
model::ModelConfig ConfigOf(const Header& h, const ByteReader& r, const std::string& label) {
  model::ModelConfig c;
  c.name = std::filesystem::path(label).filename().string();
  c.arch = "llama";
  c.vocab_size = h.vocab();
  c.d_model = h.dim;
  c.n_heads = h.n_heads;
  c.n_kv_heads = h.n_kv_heads;
  c.head_dim = h.head_size();
  c.norm_eps = 1e-5f;  // run.c's rmsnorm
  c.rope_style = model::RopeStyle::kInterleaved;
  c.rope_base = 10000.0f;
  c.ffn_dim = h.hidden;
  c.tied_output = h.shared();
  c.max_seq_len = h.seq_len;
  // Each layer holds at least 2*dim floats of norms.
  if (static_cast<uint64_t>(h.n_layers) > r.remaining() / 8)
    r.Fail("n_layers is larger than the file can hold");
  c.layers.resize(h.n_layers);
  CheckConfig(c, label);
  return c;
}

// Lists the file's f32 tensors one after another from `offset`, each
// checked to lie inside the file.
class TensorCursor {
 public:
  TensorCursor(std::span<const std::byte> bytes, uint64_t offset, const std::string& label)
      : bytes_(bytes), offset_(offset), label_(label) {}

  void Take(const std::string& name, std::vector<int64_t> shape) {
    uint64_t n = 1;
    for (int64_t d : shape) n = CheckedMul(n, static_cast<uint64_t>(d), label_, "a tensor size");
    const uint64_t nbytes = CheckedMul(n, 4, label_, "a tensor size");
    if (offset_ > bytes_.size() || nbytes > bytes_.size() - offset_) {
      throw CheckpointError(label_ + ": file ends inside tensor '" + name + "' (" +
                            std::to_string(nbytes) + " bytes needed at byte " +
                            std::to_string(offset_) + ", the file has " +
                            std::to_string(bytes_.size()) + ")");
    }
    table_[name] = FileTensor{model::DType::kF32, std::move(shape), bytes_.data() + offset_, false};
    offset_ += nbytes;
  }
  void TakePerLayer(int n_layers, const char* suffix, const std::vector<int64_t>& shape) {
    for (int l = 0; l < n_layers; ++l) Take("blk." + std::to_string(l) + "." + suffix, shape);
  }
  void Skip(uint64_t nbytes) {
    offset_ = CheckedAdd(offset_, nbytes, label_, "the classifier offset");
  }
  TensorTable& table() { return table_; }

 private:
  std::span<const std::byte> bytes_;
  uint64_t offset_;
  const std::string& label_;
  TensorTable table_;
};

// Takes the tensors in run.c's order: the embedding, then each weight kind
// for all layers at once, the final norm, and an untied classifier after
// run.c's legacy RoPE tables.
void TakeTensors(const Header& h, const std::string& label, TensorCursor& cursor) {
  const int64_t d = h.dim, f = h.hidden, vocab = h.vocab();
  const int64_t q = int64_t{h.n_heads} * h.head_size(), kv = int64_t{h.n_kv_heads} * h.head_size();
  cursor.Take("token_embd.weight", {vocab, d});
  cursor.TakePerLayer(h.n_layers, "attn_norm.weight", {d});
  cursor.TakePerLayer(h.n_layers, "attn_q.weight", {q, d});
  cursor.TakePerLayer(h.n_layers, "attn_k.weight", {kv, d});
  cursor.TakePerLayer(h.n_layers, "attn_v.weight", {kv, d});
  cursor.TakePerLayer(h.n_layers, "attn_output.weight", {d, q});
  cursor.TakePerLayer(h.n_layers, "ffn_norm.weight", {d});
  cursor.TakePerLayer(h.n_layers, "ffn_gate.weight", {f, d});  // w1
  cursor.TakePerLayer(h.n_layers, "ffn_down.weight", {d, f});  // w2
  cursor.TakePerLayer(h.n_layers, "ffn_up.weight", {f, d});    // w3
  cursor.Take("output_norm.weight", {d});
  if (!h.shared()) {
    // Skip run.c's legacy freq_cis_real and freq_cis_imag tables.
    cursor.Skip(CheckedMul(
        CheckedMul(uint64_t(h.seq_len), uint64_t(h.head_size()), label, "the RoPE tables"), 4,
        label, "the RoPE tables"));
    cursor.Take("output.weight", {vocab, d});
  }
}

}  // namespace

model::ModelWeights LoadLlama2cBytes(std::span<const std::byte> bytes,
                                     std::shared_ptr<const void> keep_alive,
                                     const std::string& label) {
  ByteReader r(bytes, label);
  const Header h = ReadHeader(r);
  const model::ModelConfig c = ConfigOf(h, r, label);
  TensorCursor cursor(bytes, r.offset(), label);
  TakeTensors(h, label, cursor);
  auto storage = std::make_shared<LoadedStorage>();
  storage->files.push_back(std::move(keep_alive));
  return BindTensors(c, cursor.table(), label, storage);
}

model::ModelWeights LoadLlama2cFile(const std::string& path) {
  const auto file = MappedFile::Open(path);
  model::ModelWeights w = LoadLlama2cBytes(file->bytes(), file, path);
  const auto tok = std::filesystem::path(path).parent_path() / "tokenizer.bin";
  std::error_code ec;
  if (std::filesystem::is_regular_file(tok, ec)) {
    try {
      w.vocabulary = LoadTokenizerBin(tok.string(), w.config.vocab_size);
    } catch (const CheckpointError&) {
      // A tokenizer of another size belongs to another model: leave none.
    }
  }
  return w;
}

}  // namespace samebits::formats
