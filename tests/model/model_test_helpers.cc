#include "tests/model/model_test_helpers.h"

#include <cstring>
#include <memory>

#include "engine/model/tensor_spec.h"
#include "engine/numerics/hash.h"

namespace samebits::model::testing {

const numerics::MathLibrary& PortableMath() {
  return numerics::GetMathLibrary(numerics::MathProfile::kPortable);
}

ModelWeights CloneWeights(const ModelWeights& w) {
  ModelWeights copy = w;
  ModelWeights& source = const_cast<ModelWeights&>(w);
  size_t total = 0;
  ForEachTensor(w.config, [&](const TensorSpec& s) { total += s.slot(source).bytes(); });
  auto buffer = std::shared_ptr<std::byte[]>(new std::byte[total + 1]);
  size_t offset = 0;
  ForEachTensor(w.config, [&](const TensorSpec& s) {
    TensorView& view = s.slot(copy);
    if (!view.present()) return;
    std::memcpy(buffer.get() + offset, view.data, view.bytes());
    view.data = buffer.get() + offset;
    if (view.quantized) view.quant_blocks = view.data;
    offset += view.bytes();
  });
  copy.storage = buffer;
  return copy;
}

std::byte* MutableBytes(const TensorView& view) {
  return const_cast<std::byte*>(view.data);
}

std::vector<int32_t> PromptTokens(int n, int vocab, uint64_t seed) {
  std::vector<int32_t> tokens;
  uint64_t state = seed;
  for (int i = 0; i < n; ++i) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z = z ^ (z >> 31);
    tokens.push_back(static_cast<int32_t>(z % static_cast<uint64_t>(vocab)));
  }
  return tokens;
}

void HashingTrace::Record(int layer, const char* op, int position, const float* data, int64_t n) {
  hashes[{layer, op, position}] = numerics::HashFloatsXxh3({data, static_cast<size_t>(n)});
}

PromptRun RunChunked(const ModelWeights& w, const std::vector<int32_t>& tokens,
                     const std::vector<int>& chunks) {
  PromptRun run;
  auto forward = MakeReferenceForward(w, PortableMath());
  InferenceState state = MakeState(w.config);
  const int vocab = w.config.vocab_size;
  size_t at = 0;
  for (size_t c = 0; at < tokens.size(); ++c) {
    const size_t n =
        c < chunks.size() ? std::min<size_t>(chunks[c], tokens.size() - at) : tokens.size() - at;
    std::vector<float> logits;
    forward->Run(state, std::span(tokens).subspan(at, n), true, logits, &run.trace);
    for (size_t r = 0; r < n; ++r) {
      run.rows.emplace_back(logits.begin() + r * vocab, logits.begin() + (r + 1) * vocab);
    }
    at += n;
  }
  return run;
}

PromptRun RunOneByOne(const ModelWeights& w, const std::vector<int32_t>& tokens) {
  PromptRun run;
  auto forward = MakeReferenceForward(w, PortableMath());
  InferenceState state = MakeState(w.config);
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::vector<float> logits;
    forward->Run(state, std::span(tokens).subspan(i, 1), false, logits, &run.trace);
    run.rows.push_back(logits);
  }
  return run;
}

std::string FirstDifference(const PromptRun& a, const PromptRun& b) {
  if (a.rows.size() != b.rows.size()) return "different numbers of positions";
  for (size_t p = 0; p < a.rows.size(); ++p) {
    if (a.rows[p].size() != b.rows[p].size() ||
        std::memcmp(a.rows[p].data(), b.rows[p].data(), a.rows[p].size() * sizeof(float)) != 0) {
      return "logits differ at position " + std::to_string(p);
    }
  }
  return "";
}

}  // namespace samebits::model::testing
