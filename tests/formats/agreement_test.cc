// Agreement with engines we did not write: llama.cpp's logits on every
// shared GGUF file, and llama2.c's run.c greedy ids on stories260K.bin.
// The figures are measured and printed (and recorded as test properties),
// so a reader sees how close the engines are, not only that a bound held.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "engine/formats/checkpoint.h"
#include "engine/model/forward.h"
#include "engine/model/sampler.h"
#include "engine/numerics/math.h"
#include "tests/formats/formats_test_helpers.h"

namespace samebits::formats {
namespace {

using testing::Checkpoint;

struct Case {
  const char* name;  // file stem
  bool f32;          // all matrices F32 (or quantized, compared with the
                     // dump of the dequantized twin): llama.cpp keeps F32 activations
  // Stem of the llama.cpp dump, when not `name`: a quantized file is
  // compared with llama.cpp on its dequantized-F32 twin, since llama.cpp's
  // CPU matmuls on the quantized file also quantize the activations.
  const char* dump = nullptr;
};

// Printed by name (gtest would otherwise dump the struct's padding bytes).
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class LlamaCppAgreement : public ::testing::TestWithParam<Case> {};

TEST_P(LlamaCppAgreement, SequentialLogits) {
  SKIP_WITHOUT_CHECKPOINTS();
  const Case c = GetParam();
  const model::ModelWeights w = LoadCheckpoint("gguf:" + Checkpoint(std::string(c.name) + ".gguf"));
  const int n_vocab = w.config.vocab_size;
  const std::string dump = c.dump != nullptr ? c.dump : c.name;
  const auto ref_bytes = testing::ReadBytes(Checkpoint("llamacpp-logits/" + dump + ".t1.seq.f32"));
  const std::vector<int32_t> tokens = testing::LlamaCppTokens(n_vocab);
  ASSERT_EQ(ref_bytes.size(), tokens.size() * n_vocab * sizeof(float));
  const auto ours = testing::ReferenceLogits(w, tokens);

  double max_abs_diff = 0, max_abs_logit = 0;
  int argmax_equal = 0, decisive = 0, decisive_equal = 0;
  for (size_t pos = 0; pos < tokens.size(); ++pos) {
    std::vector<float> theirs(n_vocab);
    std::memcpy(theirs.data(), ref_bytes.data() + pos * n_vocab * sizeof(float),
                n_vocab * sizeof(float));
    for (int i = 0; i < n_vocab; ++i) {
      max_abs_diff = std::max(max_abs_diff, std::fabs(double(ours[pos][i]) - theirs[i]));
      max_abs_logit = std::max(max_abs_logit, std::fabs(double(theirs[i])));
    }
    const int32_t a = model::Argmax(ours[pos]), b = model::Argmax(theirs);
    argmax_equal += a == b;
    // The gap between llama.cpp's best and second-best logit decides
    // whether rounding differences may legitimately swap them.
    std::vector<float> sorted = theirs;
    std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<float>());
    if (sorted[0] - sorted[1] > 1e-2f) {
      ++decisive;
      decisive_equal += a == b;
    }
  }
  const double rel = max_abs_diff / max_abs_logit;
  std::ostringstream s;
  s << c.name << (c.dump != nullptr ? " vs llama.cpp on " + dump : std::string())
    << ": max abs diff " << max_abs_diff << ", max abs logit " << max_abs_logit << ", relative "
    << rel << ", argmax equal " << argmax_equal << "/" << tokens.size() << " (decisive positions "
    << decisive_equal << "/" << decisive << ")";
  std::cout << "[agreement] " << s.str() << "\n";
  RecordProperty("max_abs_diff", std::to_string(max_abs_diff));
  RecordProperty("relative_diff", std::to_string(rel));
  RecordProperty("argmax_equal",
                 std::to_string(argmax_equal) + "/" + std::to_string(tokens.size()));
  if (c.f32) {
    EXPECT_EQ(argmax_equal, static_cast<int>(tokens.size())) << s.str();
    EXPECT_LE(rel, 1e-4) << s.str();
  } else {
    // llama.cpp rounds activations to the weights' 16-bit type first.
    EXPECT_EQ(decisive_equal, decisive) << s.str();
    EXPECT_LE(rel, 5e-2) << s.str();
  }
}

INSTANTIATE_TEST_SUITE_P(
    SharedGguf, LlamaCppAgreement,
    ::testing::Values(Case{"stories260K", true}, Case{"tiny_dense_llama_f32", true},
                      Case{"tiny_moe_mixtral_f32", true}, Case{"tiny_dense_llama_bf16", false},
                      Case{"tiny_moe_mixtral_bf16", false}, Case{"llama-2-tiny-random", false},
                      Case{"small_dense_qwen3_f32", true}, Case{"tiny_dense_qwen2_f32", true},
                      Case{"tiny_dense_qwen2_bf16", false},
                      Case{"small_dense_qwen3_q8_0.deq-f32", true},
                      Case{"small_dense_qwen3_q4_0.deq-f32", true},
                      Case{"small_dense_qwen3_q4_k_m.deq-f32", true},
                      Case{"small_dense_qwen3_q6_k.deq-f32", true},
                      Case{"small_dense_qwen3_q8_0", true, "small_dense_qwen3_q8_0.deq-f32"},
                      Case{"small_dense_qwen3_q4_0", true, "small_dense_qwen3_q4_0.deq-f32"},
                      Case{"small_dense_qwen3_q4_k_m", true, "small_dense_qwen3_q4_k_m.deq-f32"},
                      Case{"small_dense_qwen3_q6_k", true, "small_dense_qwen3_q6_k.deq-f32"}),
    [](const auto& info) {
      std::string n = info.param.name;
      std::replace(n.begin(), n.end(), '-', '_');
      std::replace(n.begin(), n.end(), '.', '_');
      return n;
    });

TEST(Llama2cAgreement, GreedyIdsMatchRunC) {
  SKIP_WITHOUT_CHECKPOINTS();
  const model::ModelWeights w = LoadCheckpoint("llama2c:" + Checkpoint("stories260K.bin"));
  std::ifstream in(Checkpoint("stories260K.runc-greedy-ids.txt"));
  std::vector<int32_t> expected;
  for (int32_t id; in >> id;) expected.push_back(id);
  ASSERT_GE(expected.size(), 256u);
  // run.c starts at BOS (1) and feeds back its argmax; it would stop at BOS.
  const int steps = 256;
  std::vector<int32_t> fed = {1};
  std::vector<int32_t> got;
  const auto& math = numerics::GetMathLibrary(numerics::MathProfile::kPortable);
  auto f = model::MakeReferenceForward(w, math);
  model::InferenceState state = model::MakeState(w.config);
  std::vector<float> logits;
  int32_t token = 1;
  for (int i = 0; i < steps; ++i) {
    f->Run(state, std::span<const int32_t>(&token, 1), false, logits, nullptr);
    token = model::Argmax(logits);
    got.push_back(token);
    if (token == 1) break;
  }
  int equal = 0;
  while (equal < static_cast<int>(got.size()) && got[equal] == expected[equal]) ++equal;
  std::cout << "[agreement] stories260K.bin greedy ids equal to run.c's for the first " << equal
            << " of " << steps << "\n";
  RecordProperty("runc_ids_equal", equal);
  EXPECT_EQ(equal, steps);
}

TEST(Llama2cAgreement, BinAndGgufGiveIdenticalLogits) {
  SKIP_WITHOUT_CHECKPOINTS();
  const model::ModelWeights bin = LoadCheckpoint("llama2c:" + Checkpoint("stories260K.bin"));
  const model::ModelWeights gguf = LoadCheckpoint("gguf:" + Checkpoint("stories260K.gguf"));
  const auto tokens = testing::LlamaCppTokens(512);
  EXPECT_TRUE(testing::SameBits(testing::ReferenceLogits(bin, tokens),
                                testing::ReferenceLogits(gguf, tokens)));
}

// The cpu pass must reproduce the reference bit for bit on real files too.
TEST(CpuPassOnRealFiles, BitIdenticalToReference) {
  SKIP_WITHOUT_CHECKPOINTS();
  for (const char* spec : {"gguf:stories260K.gguf", "llama2c:stories260K.bin",
                           "gguf:llama-2-tiny-random.gguf", "gguf:tiny_dense_llama_f32.gguf",
                           "gguf:tiny_dense_llama_bf16.gguf", "gguf:tiny_moe_mixtral_f32.gguf",
                           "gguf:tiny_moe_mixtral_bf16.gguf", "gguf:small_dense_qwen3_f32.gguf",
                           "gguf:small_dense_qwen3_q4_k_m.gguf", "gguf:small_dense_qwen3_q8_0.gguf",
                           "gguf:tiny_dense_qwen2_f32.gguf", "gguf:tiny_dense_qwen2_bf16.gguf"}) {
    SCOPED_TRACE(spec);
    std::string s = spec;
    const auto colon = s.find(':');
    const model::ModelWeights w =
        LoadCheckpoint(s.substr(0, colon + 1) + Checkpoint(s.substr(colon + 1)));
    const auto tokens = testing::LlamaCppTokens(w.config.vocab_size);
    const auto ref = testing::ReferenceLogits(w, tokens);
    for (int threads : {1, 2}) {
      EXPECT_TRUE(testing::SameBits(ref, testing::CpuLogits(w, tokens, threads)))
          << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace samebits::formats
