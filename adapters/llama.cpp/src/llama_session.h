// One llama.cpp model and context, configured once from the adapter's axes:
// the only file that calls libllama for loading and decoding. Everything it
// runs is CPU-only (no device is offered to the model).
#pragma once

#include <llama.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace samebits::llamacpp {

// The context's configuration: the adapter's axes that llama.cpp sees.
struct SessionOptions {
  int threads = 1;          // n_threads and n_threads_batch
  int ubatch = 512;         // n_ubatch: rows per physical batch
  bool flash_attn = false;  // flash_attn_type ENABLED or DISABLED
  bool kv_f16 = false;      // the K/V cache type: F16, or F32 (samebits keeps F32)
  int sequences = 1;        // n_seq_max: the scenario's sequence and its companions
  int context = 512;        // n_ctx (and n_batch): every position of every sequence
};

// One row of a llama_decode call.
struct BatchRow {
  llama_token token = 0;
  llama_pos position = 0;
  llama_seq_id sequence = 0;
  bool output = false;  // the row's logits are computed and read back
};

class LlamaSession {
 public:
  // Loads the GGUF file at `path`. Throws Unsupported when llama.cpp
  // refuses it (an architecture or type it does not implement), with
  // llama.cpp's last message.
  explicit LlamaSession(const std::string& path);
  ~LlamaSession();
  LlamaSession(const LlamaSession&) = delete;
  LlamaSession& operator=(const LlamaSession&) = delete;

  // Makes the context (once, before any Decode). Throws Unsupported when
  // llama.cpp refuses the configuration.
  void CreateContext(const SessionOptions& options);

  // Returns the vocabulary size (logits per row).
  int VocabSize() const;
  // Returns the context the model was trained for (its positions' limit).
  int TrainedContext() const;
  // Returns what llama.cpp resolved: threads, n_ubatch.
  int Threads() const;
  int Ubatch() const;
  // Returns `text` tokenized by the model's own vocabulary, BOS first when
  // `add_special` and the vocabulary adds one. Throws Unsupported when the
  // model has no vocabulary.
  std::vector<int32_t> Tokenize(const std::string& text, bool add_special) const;

  // Feeds `rows` in one llama_decode call (llama.cpp splits it into
  // micro-batches of n_ubatch rows). Throws std::runtime_error on failure.
  void Decode(const std::vector<BatchRow>& rows);
  // Returns the logits of row `row` of the last Decode (an output row).
  std::span<const float> Logits(int row) const;
  // Forgets every position of `sequence` (a companion that leaves).
  void RemoveSequence(llama_seq_id sequence);

 private:
  llama_model* model_ = nullptr;
  llama_context* context_ = nullptr;
  const llama_vocab* vocab_ = nullptr;
};

// Returns llama.cpp's messages since the last call (its log is captured, not
// printed, so that stderr stays quiet in a passing run).
std::string TakeLlamaLog();

}  // namespace samebits::llamacpp
