#include "llama_session.h"

#include <ggml.h>

#include <mutex>
#include <stdexcept>
#include <string>

#include "adapter_errors.h"

namespace samebits::llamacpp {
namespace {

std::mutex log_mutex;
std::string captured_log;

void CaptureLog(ggml_log_level /*level*/, const char* text, void* /*user*/) {
  std::lock_guard<std::mutex> lock(log_mutex);
  captured_log += text;
  // Keep the tail only: a long run must not grow without bound.
  if (captured_log.size() > (1u << 20)) captured_log.erase(0, captured_log.size() - (1u << 19));
}

// Returns the last line of llama.cpp's log that says "error" (it names the
// cause; the lines after it only say that loading failed), else its last
// non-empty line, for a message.
std::string LastLogLine() {
  std::lock_guard<std::mutex> lock(log_mutex);
  std::string last, last_error;
  size_t start = 0;
  while (start < captured_log.size()) {
    size_t end = captured_log.find('\n', start);
    if (end == std::string::npos) end = captured_log.size();
    const std::string line = captured_log.substr(start, end - start);
    if (line.find_first_not_of(' ') != std::string::npos) last = line;
    if (line.find("error") != std::string::npos) last_error = line;
    start = end + 1;
  }
  return last_error.empty() ? last : last_error;
}

}  // namespace

std::string TakeLlamaLog() {
  std::lock_guard<std::mutex> lock(log_mutex);
  std::string log;
  log.swap(captured_log);
  return log;
}

LlamaSession::LlamaSession(const std::string& path) {
  llama_log_set(CaptureLog, nullptr);
  llama_backend_init();
  llama_model_params model_params = llama_model_default_params();
  // CPU only: no GPU layers, and no device list but the CPU's own.
  model_params.n_gpu_layers = 0;
  model_ = llama_model_load_from_file(path.c_str(), model_params);
  if (model_ == nullptr) {
    throw Unsupported("llama.cpp " LLAMA_CPP_REV " cannot load " + path + ": " + LastLogLine());
  }
  vocab_ = llama_model_get_vocab(model_);
}

void LlamaSession::CreateContext(const SessionOptions& options) {
  llama_context_params params = llama_context_default_params();
  params.n_ctx = static_cast<uint32_t>(options.context);
  params.n_batch = static_cast<uint32_t>(options.context);
  params.n_ubatch = static_cast<uint32_t>(options.ubatch);
  params.n_seq_max = static_cast<uint32_t>(options.sequences);
  params.n_threads = options.threads;
  params.n_threads_batch = options.threads;
  params.flash_attn_type =
      options.flash_attn ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
  params.type_k = options.kv_f16 ? GGML_TYPE_F16 : GGML_TYPE_F32;
  params.type_v = params.type_k;
  // One cache for all sequences, as a server's continuous batching keeps
  // it: companions' cells sit beside the scenario's (masked out of its
  // attention).
  params.kv_unified = true;
  params.offload_kqv = false;
  params.op_offload = false;
  params.no_perf = true;
  context_ = llama_init_from_model(model_, params);
  if (context_ == nullptr) {
    throw Unsupported("llama.cpp " LLAMA_CPP_REV " refuses this context (threads " +
                      std::to_string(options.threads) + ", ubatch " +
                      std::to_string(options.ubatch) + ", flash attention " +
                      (options.flash_attn ? "on" : "off") + ", kv " +
                      (options.kv_f16 ? "f16" : "f32") + "): " + LastLogLine());
  }
}

LlamaSession::~LlamaSession() {
  if (context_ != nullptr) llama_free(context_);
  if (model_ != nullptr) llama_model_free(model_);
  llama_backend_free();
}

int LlamaSession::VocabSize() const {
  return llama_vocab_n_tokens(vocab_);
}
int LlamaSession::TrainedContext() const {
  return llama_model_n_ctx_train(model_);
}
int LlamaSession::Threads() const {
  return llama_n_threads(context_);
}
int LlamaSession::Ubatch() const {
  return static_cast<int>(llama_n_ubatch(context_));
}

std::vector<int32_t> LlamaSession::Tokenize(const std::string& text, bool add_special) const {
  if (llama_vocab_type(vocab_) == LLAMA_VOCAB_TYPE_NONE) {
    throw Unsupported("the checkpoint has no vocabulary; use 'tokens' or 'random'");
  }
  const int length = static_cast<int>(text.size());
  int n = llama_tokenize(vocab_, text.data(), length, nullptr, 0, add_special, false);
  if (n == INT32_MIN) throw InputError("text of " + std::to_string(length) + " bytes: too long");
  std::vector<int32_t> tokens(static_cast<size_t>(n < 0 ? -n : n));
  n = llama_tokenize(vocab_, text.data(), length, tokens.data(), static_cast<int>(tokens.size()),
                     add_special, false);
  if (n < 0) throw std::runtime_error("llama_tokenize failed: " + LastLogLine());
  tokens.resize(static_cast<size_t>(n));
  return tokens;
}

void LlamaSession::Decode(const std::vector<BatchRow>& rows) {
  llama_batch batch = llama_batch_init(static_cast<int32_t>(rows.size()), 0, 1);
  for (size_t i = 0; i < rows.size(); ++i) {
    batch.token[i] = rows[i].token;
    batch.pos[i] = rows[i].position;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = rows[i].sequence;
    batch.logits[i] = rows[i].output ? 1 : 0;
  }
  batch.n_tokens = static_cast<int32_t>(rows.size());
  const int32_t status = llama_decode(context_, batch);
  llama_batch_free(batch);
  if (status != 0) {
    throw std::runtime_error("llama_decode of " + std::to_string(rows.size()) + " rows returned " +
                             std::to_string(status) + ": " + LastLogLine());
  }
}

std::span<const float> LlamaSession::Logits(int row) const {
  const float* logits = llama_get_logits_ith(context_, row);
  if (logits == nullptr) {
    throw std::runtime_error("llama_get_logits_ith(" + std::to_string(row) + ") has no logits");
  }
  return {logits, static_cast<size_t>(VocabSize())};
}

void LlamaSession::RemoveSequence(llama_seq_id sequence) {
  llama_memory_seq_rm(llama_get_memory(context_), sequence, -1, -1);
}

}  // namespace samebits::llamacpp
