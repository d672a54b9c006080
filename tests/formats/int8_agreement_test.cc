// The integer profile (engine/numerics/README.md, C12) on the real
// quantized Qwen3 files: the same bits on every pass, ISA and thread count,
// and how far it lies from the exact profile and from llama.cpp, which
// quantizes its activations too (NMSE and top-1 agreement per file; the
// figures are BENCHMARKS.md's, printed as `[int8 agreement]` lines).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/formats/checkpoint.h"
#include "engine/model/sampler.h"
#include "tests/formats/formats_test_helpers.h"

namespace samebits::formats {
namespace {

using Logits = std::vector<std::vector<float>>;

// sum (a - b)^2 / sum b^2 over every logit of every position: `a`'s error
// relative to `b`'s energy.
double Nmse(const Logits& a, const Logits& b) {
  double err = 0, energy = 0;
  for (size_t p = 0; p < b.size(); ++p) {
    for (size_t i = 0; i < b[p].size(); ++i) {
      const double d = double(a[p][i]) - b[p][i];
      err += d * d;
      energy += double(b[p][i]) * b[p][i];
    }
  }
  return err / energy;
}

int SameTop1(const Logits& a, const Logits& b) {
  int same = 0;
  for (size_t p = 0; p < b.size(); ++p) same += model::Argmax(a[p]) == model::Argmax(b[p]);
  return same;
}

Logits LlamaCppSequentialLogits(const std::string& stem, int n_vocab, size_t positions) {
  const auto bytes =
      testing::ReadBytes(testing::Checkpoint("llamacpp-logits/" + stem + ".t1.seq.f32"));
  Logits out(positions, std::vector<float>(static_cast<size_t>(n_vocab)));
  EXPECT_EQ(bytes.size(), positions * n_vocab * sizeof(float));
  for (size_t p = 0; p < positions && (p + 1) * n_vocab * sizeof(float) <= bytes.size(); ++p) {
    std::memcpy(out[p].data(), bytes.data() + p * n_vocab * sizeof(float), n_vocab * sizeof(float));
  }
  return out;
}

class Int8OnRealFiles : public ::testing::TestWithParam<const char*> {};

TEST_P(Int8OnRealFiles, IdenticalEverywhereAndCloseToLlamaCpp) {
  SKIP_WITHOUT_CHECKPOINTS();
  const std::string stem = GetParam();
  const model::ModelWeights w = LoadCheckpoint("gguf:" + testing::Checkpoint(stem + ".gguf"));
  const std::vector<int32_t> tokens = testing::LlamaCppTokens(w.config.vocab_size);
  const Logits int8 = testing::ReferenceLogits(w, tokens, numerics::QuantDot::kInt8);
  // The contract: the cpu pass on every ISA here, at 1 and 2 threads.
  for (kernels::Isa isa : kernels::AvailableIsas()) {
    for (int threads : {1, 2}) {
      EXPECT_TRUE(testing::SameBits(
          int8, testing::CpuLogits(w, tokens, threads, numerics::QuantDot::kInt8, isa)))
          << stem << " on " << kernels::IsaName(isa) << ", " << threads << " threads";
    }
  }
  const Logits exact = testing::ReferenceLogits(w, tokens);
  const Logits llama = LlamaCppSequentialLogits(stem, w.config.vocab_size, tokens.size());
  const double int8_vs_llama = Nmse(int8, llama), exact_vs_llama = Nmse(exact, llama);
  const double int8_vs_exact = Nmse(int8, exact);
  std::ostringstream s;
  s << stem << ": NMSE int8 vs llama.cpp " << int8_vs_llama << " (top-1 " << SameTop1(int8, llama)
    << "/" << tokens.size() << "), exact vs llama.cpp " << exact_vs_llama << " (top-1 "
    << SameTop1(exact, llama) << "/" << tokens.size() << "), int8 vs exact " << int8_vs_exact
    << " (top-1 " << SameTop1(int8, exact) << "/" << tokens.size() << ")";
  std::cout << "[int8 agreement] " << s.str() << "\n";
  EXPECT_FALSE(testing::SameBits(int8, exact)) << stem << ": the int8 profile changed nothing";
  EXPECT_LE(int8_vs_llama, 1e-3) << s.str();
  EXPECT_LE(int8_vs_exact, 1e-3) << s.str();
}

INSTANTIATE_TEST_SUITE_P(QuantizedQwen3, Int8OnRealFiles,
                         ::testing::Values("small_dense_qwen3_q8_0", "small_dense_qwen3_q4_0",
                                           "small_dense_qwen3_q4_k_m", "small_dense_qwen3_q6_k"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(n.rfind('_', n.size() - 3) + 1);
                         });

}  // namespace
}  // namespace samebits::formats
