// A checkpoint's header may claim any context length (GGUF context_length,
// config.json max_position_embeddings, llama2.c seq_len); nothing may be
// sized by that claim. Both passes size their KV caches and scratch by the
// positions a run reaches, so a claim of 2^31 - 1 positions runs in a child
// process whose address space is limited to 1 GiB. (Before the fix, the cpu
// pass reserved threads x max_seq_len floats of attention scratch up front,
// 16 GiB here, and died of std::bad_alloc.)
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "engine/model/forward.h"
#include "engine/model/synthetic.h"
#include "engine/numerics/math.h"
#include "engine/threads/thread_pool.h"
#include "tests/model/address_space_limit.h"

namespace samebits::model {
namespace {

ModelWeights TinyClaimingHugeContext() {
  ModelWeights w = MakeSyntheticWeights("tiny", DType::kBF16);
  w.config.max_seq_len = 2147483647;
  return w;
}

// Runs a prompt, a decode and an extend with both passes.
void RunBothPasses(const ModelWeights& w) {
  const auto& math = numerics::GetMathLibrary(numerics::MathProfile::kPortable);
  threads::ThreadPool pool(2);
  CpuOptions options;
  options.isa = kernels::BestIsa();
  auto cpu = MakeCpuForward(w, math, pool, options);
  auto reference = MakeReferenceForward(w, math);
  for (Forward* f : {cpu.get(), reference.get()}) {
    InferenceState state = MakeState(w.config);
    std::vector<float> logits;
    const std::vector<int32_t> prompt = {1, 2, 3, 4, 5};
    f->Run(state, prompt, false, logits, nullptr);
    const std::vector<int32_t> one = {6};
    f->Run(state, one, false, logits, nullptr);
    f->Run(state, prompt, true, logits, nullptr);
  }
}

TEST(ClaimedContextDeathTest, AClaimOf2To31PositionsRunsInOneGiB) {
  if (!kAddressSpaceLimitWorks) GTEST_SKIP() << "AddressSanitizer: no address-space limit fits";
  const ModelWeights w = TinyClaimingHugeContext();
  EXPECT_EXIT(ExitUnderLimit([&] { RunBothPasses(w); }), testing::ExitedWithCode(0), "");
}

// The negative control: under the same limit, what the cpu pass used to
// reserve up front (attention scratch of threads x max_seq_len floats) does
// fail, so the test above would catch its return.
TEST(ClaimedContextDeathTest, NegativeControlAnEagerReservationFails) {
  if (!kAddressSpaceLimitWorks) GTEST_SKIP() << "AddressSanitizer: no address-space limit fits";
  const ModelWeights w = TinyClaimingHugeContext();
  EXPECT_EXIT(ExitUnderLimit([&] {
                std::vector<float> scores(size_t{2} * static_cast<size_t>(w.config.max_seq_len));
                if (scores.empty()) std::exit(4);
              }),
              testing::ExitedWithCode(kOutOfMemory), "");
}

}  // namespace
}  // namespace samebits::model
