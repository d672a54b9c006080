#include "engine/formats/llama2c.h"

#include <filesystem>

#include "engine/formats/byte_reader.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/mapped_file.h"
#include "engine/formats/tensor_table.h"
#include "engine/formats/vocabulary.h"

namespace samebits::formats {

model::ModelWeights LoadLlama2cBytes(std::span<const std::byte> bytes,
                                     std::shared_ptr<const void> keep_alive,
                                     const std::string& label) {
  ByteReader r(bytes, label);
  const int32_t dim = r.I32("dim");
  const int32_t hidden = r.I32("hidden_dim");
  const int32_t n_layers = r.I32("n_layers");
  const int32_t n_heads = r.I32("n_heads");
  const int32_t n_kv_heads = r.I32("n_kv_heads");
  const int32_t vocab_signed = r.I32("vocab_size");
  const int32_t seq_len = r.I32("seq_len");
  auto positive = [&](int32_t v, const char* name) {
    if (v <= 0)
      r.Fail(std::string("header field ") + name + " is " + std::to_string(v) + ", not positive");
  };
  positive(dim, "dim");
  positive(hidden, "hidden_dim");
  positive(n_layers, "n_layers");
  positive(n_heads, "n_heads");
  positive(n_kv_heads, "n_kv_heads");
  positive(seq_len, "seq_len");
  if (vocab_signed == 0 || vocab_signed == INT32_MIN)
    r.Fail("header field vocab_size is " + std::to_string(vocab_signed));
  if (dim % n_heads != 0) {
    r.Fail("dim (" + std::to_string(dim) + ") is not a multiple of n_heads (" +
           std::to_string(n_heads) + ")");
  }
  const bool shared = vocab_signed > 0;
  const int32_t vocab = shared ? vocab_signed : -vocab_signed;
  const int32_t head_size = dim / n_heads;

  model::ModelConfig c;
  c.name = std::filesystem::path(label).filename().string();
  c.arch = "llama";
  c.vocab_size = vocab;
  c.d_model = dim;
  c.n_heads = n_heads;
  c.n_kv_heads = n_kv_heads;
  c.head_dim = head_size;
  c.norm_eps = 1e-5f;  // run.c's rmsnorm
  c.rope_style = model::RopeStyle::kInterleaved;
  c.rope_base = 10000.0f;
  c.ffn_dim = hidden;
  c.tied_output = shared;
  c.max_seq_len = seq_len;
  // Bound the layer count by the bytes before sizing anything by it: each
  // layer holds at least 2*dim floats of norms.
  if (static_cast<uint64_t>(n_layers) > r.remaining() / 8)
    r.Fail("n_layers is larger than the file can hold");
  c.layers.resize(n_layers);
  CheckConfig(c, label);

  // run.c's order: embedding, then each weight kind for all layers at once.
  TensorTable table;
  uint64_t offset = r.offset();
  const uint64_t kv_dim = uint64_t(n_kv_heads) * head_size, q_dim = uint64_t(n_heads) * head_size;
  auto take = [&](const std::string& name, std::vector<int64_t> shape) {
    uint64_t n = 1;
    for (int64_t d : shape) n = CheckedMul(n, static_cast<uint64_t>(d), label, "a tensor size");
    const uint64_t nbytes = CheckedMul(n, 4, label, "a tensor size");
    if (offset > bytes.size() || nbytes > bytes.size() - offset) {
      throw CheckpointError(label + ": file ends inside tensor '" + name + "' (" +
                            std::to_string(nbytes) + " bytes needed at byte " +
                            std::to_string(offset) + ", the file has " +
                            std::to_string(bytes.size()) + ")");
    }
    table[name] = FileTensor{model::DType::kF32, std::move(shape), bytes.data() + offset, false};
    offset += nbytes;
  };
  auto per_layer = [&](const char* suffix, std::vector<int64_t> shape) {
    for (int l = 0; l < n_layers; ++l) take("blk." + std::to_string(l) + "." + suffix, shape);
  };
  const int64_t d = dim, h = hidden, q = static_cast<int64_t>(q_dim),
                kv = static_cast<int64_t>(kv_dim);
  take("token_embd.weight", {vocab, d});
  per_layer("attn_norm.weight", {d});
  per_layer("attn_q.weight", {q, d});
  per_layer("attn_k.weight", {kv, d});
  per_layer("attn_v.weight", {kv, d});
  per_layer("attn_output.weight", {d, q});
  per_layer("ffn_norm.weight", {d});
  per_layer("ffn_gate.weight", {h, d});  // w1
  per_layer("ffn_down.weight", {d, h});  // w2
  per_layer("ffn_up.weight", {h, d});    // w3
  take("output_norm.weight", {d});
  if (!shared) {
    // Skip run.c's legacy freq_cis_real and freq_cis_imag tables.
    const uint64_t skip =
        CheckedMul(CheckedMul(uint64_t(seq_len), uint64_t(head_size), label, "the RoPE tables"), 4,
                   label, "the RoPE tables");
    offset = CheckedAdd(offset, skip, label, "the classifier offset");
    take("output.weight", {vocab, d});
  }
  auto storage = std::make_shared<LoadedStorage>();
  storage->files.push_back(std::move(keep_alive));
  return BindTensors(c, table, label, storage);
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
