// Agreement with llama.cpp on the shared files of the families that brought
// new operations (Gemma 2 and 3, Cohere2, Llama 3.1's rope factors, Phi-3's
// fused tensors), at every position of both dumped prompts: the 21-token
// one and the 48-token one that crosses the sliding windows (16). F32 files
// must agree to 1e-5 relative with every argmax equal, except Gemma's: its
// GeGLU goes through ggml's GELU table in llama.cpp's CPU build (the input
// rounded to F16, the result an F16 table entry: up to 5e-4 relative per
// element, and an input a rounding away from the next F16 value jumps by
// one table step), while the contract computes GELU in f32 from the
// profile's tanh. Measured: llama.cpp v0.5.0 built with that table off
// (ci/llamacpp-exact-gelu.sh: GGML_GELU_FP16 undefined, nothing else
// changed) agrees with the reference pass to 2.5e-6 (gemma2) and 7.0e-6
// (gemma3) on the 48-token prompt, every argmax equal, against 1.2e-3 and
// 2.7e-3 with it: the table is the whole difference. The bound for them
// here, against llama.cpp's own dumps, is 5e-3 with every argmax equal.
// BF16 files are measured and printed (llama.cpp rounds their activations
// to BF16 first).
// The cpu pass must give the reference's bits on them, fed whole, token by
// token and in chunks that straddle the window's edge.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <sstream>

#include "engine/formats/checkpoint.h"
#include "engine/model/forward.h"
#include "engine/model/sampler.h"
#include "engine/numerics/math.h"
#include "engine/threads/thread_pool.h"
#include "tests/formats/formats_test_helpers.h"

namespace samebits::formats {
namespace {

using testing::Checkpoint;

struct Case {
  const char* name;  // file stem
  bool f32;
  double f32_bound = 1e-5;  // relative, for F32 files
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

// Returns the 48-token prompt of `llamacpp48-v512.json` (its first 21 are
// the 21-token prompt of the other dumps).
std::vector<int32_t> Prompt48() {
  std::vector<int32_t> t = {1};
  for (int i = 0; i < 47; ++i) t.push_back(3 + (37 * i + 11) % 509);
  return t;
}

// Returns the logits of every position of `tokens`, fed in chunks of
// `chunk` tokens (the last takes the rest) through `forward`.
std::vector<std::vector<float>> Chunked(model::Forward& forward, const model::ModelWeights& w,
                                        const std::vector<int32_t>& tokens, int chunk) {
  model::InferenceState state = model::MakeState(w.config);
  std::vector<std::vector<float>> rows;
  std::vector<float> logits;
  const size_t vocab = static_cast<size_t>(w.config.vocab_size);
  for (size_t at = 0; at < tokens.size(); at += chunk) {
    const size_t n = std::min(tokens.size() - at, static_cast<size_t>(chunk));
    forward.Run(state, std::span<const int32_t>(tokens.data() + at, n), true, logits, nullptr);
    for (size_t r = 0; r < n; ++r) {
      rows.emplace_back(logits.begin() + r * vocab, logits.begin() + (r + 1) * vocab);
    }
  }
  return rows;
}

class WindowedAgreement : public ::testing::TestWithParam<Case> {};

TEST_P(WindowedAgreement, LlamaCppLogitsOnBothPrompts) {
  SKIP_WITHOUT_CHECKPOINTS();
  const Case c = GetParam();
  const model::ModelWeights w = LoadCheckpoint("gguf:" + Checkpoint(std::string(c.name) + ".gguf"));
  const int n_vocab = w.config.vocab_size;
  ASSERT_EQ(n_vocab, 512);
  for (const bool long_prompt : {false, true}) {
    const std::vector<int32_t> tokens = long_prompt ? Prompt48() : testing::LlamaCppTokens(n_vocab);
    const std::string dump = std::string(c.name) + (long_prompt ? ".p48" : "") + ".t1.seq.f32";
    const auto ref_bytes = testing::ReadBytes(Checkpoint("llamacpp-logits/" + dump));
    ASSERT_EQ(ref_bytes.size(), tokens.size() * n_vocab * sizeof(float)) << dump;
    const auto ours = testing::ReferenceLogits(w, tokens);
    double max_abs_diff = 0, max_abs_logit = 0;
    int argmax_equal = 0;
    for (size_t pos = 0; pos < tokens.size(); ++pos) {
      std::vector<float> theirs(n_vocab);
      std::memcpy(theirs.data(), ref_bytes.data() + pos * n_vocab * sizeof(float),
                  n_vocab * sizeof(float));
      for (int i = 0; i < n_vocab; ++i) {
        max_abs_diff = std::max(max_abs_diff, std::fabs(double(ours[pos][i]) - theirs[i]));
        max_abs_logit = std::max(max_abs_logit, std::fabs(double(theirs[i])));
      }
      argmax_equal += model::Argmax(ours[pos]) == model::Argmax(theirs);
    }
    const double rel = max_abs_diff / max_abs_logit;
    std::ostringstream s;
    s << dump << ": max abs diff " << max_abs_diff << ", max abs logit " << max_abs_logit
      << ", relative " << rel << ", argmax equal " << argmax_equal << "/" << tokens.size();
    std::cout << "[agreement] " << s.str() << "\n";
    RecordProperty(long_prompt ? "relative_diff_p48" : "relative_diff", std::to_string(rel));
    if (c.f32) {
      EXPECT_EQ(argmax_equal, static_cast<int>(tokens.size())) << s.str();
      EXPECT_LE(rel, c.f32_bound) << s.str();
    } else {
      EXPECT_LE(rel, 5e-2) << s.str();
    }
  }
}

TEST_P(WindowedAgreement, CpuPassGivesTheReferenceBitsAcrossTheWindow) {
  SKIP_WITHOUT_CHECKPOINTS();
  const Case c = GetParam();
  const model::ModelWeights w = LoadCheckpoint("gguf:" + Checkpoint(std::string(c.name) + ".gguf"));
  const std::vector<int32_t> tokens = Prompt48();
  const auto ref = testing::ReferenceLogits(w, tokens);  // one token per call
  const auto& math = numerics::GetMathLibrary(numerics::MathProfile::kPortable);
  auto reference = model::MakeReferenceForward(w, math);
  EXPECT_TRUE(testing::SameBits(ref, Chunked(*reference, w, tokens, 48))) << "reference, whole";
  for (int threads : {1, 2}) {
    threads::ThreadPool pool(threads);
    auto cpu = model::MakeCpuForward(w, math, pool, model::CpuOptions{});
    // Whole (a prefill longer than the window), one by one (decoding past
    // it), and chunks of 7 and 12, whose edges straddle positions 15/16.
    for (int chunk : {48, 1, 7, 12}) {
      EXPECT_TRUE(testing::SameBits(ref, Chunked(*cpu, w, tokens, chunk)))
          << threads << " threads, chunks of " << chunk;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SharedGguf, WindowedAgreement,
                         ::testing::Values(Case{"tiny_dense_gemma2_f32", true, 5e-3},
                                           Case{"tiny_dense_gemma2_bf16", false},
                                           Case{"tiny_dense_gemma3_f32", true, 5e-3},
                                           Case{"tiny_dense_cohere2_f32", true},
                                           Case{"tiny_dense_cohere2_bf16", false},
                                           Case{"tiny_dense_llama3_f32", true},
                                           Case{"tiny_dense_phi3_f32", true}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace samebits::formats
