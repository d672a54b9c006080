// When the cpu pass runs out of memory, its message blames what asked for
// the memory: the positions of one sequence, or, in a batched call, the
// batch (issue 23: `--batch 16` used to blame "24 positions", the
// scenario's length, for what sixteen sequences together asked). Each case
// runs in a child whose address space is limited to 256 MiB, with a call
// that needs over 1 GiB before any arithmetic starts (the cpu pass
// reserves a call's caches and scratch first), so the tests take no time
// and no memory of the machine's.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "engine/model/forward.h"
#include "engine/model/synthetic.h"
#include "engine/numerics/math.h"
#include "engine/threads/thread_pool.h"
#include "tests/model/address_space_limit.h"

namespace samebits::model {
namespace {

// 16 x 2^14 rows of `tiny` need over 1 GiB of activations and KV cache
// (they run out under a 1 GiB limit too); one sequence of all 2^18 rows
// needs as much as the batch.
constexpr int kSequences = 16;
constexpr int kRowsEach = 1 << 14;
constexpr int64_t kLimit = int64_t{256} << 20;

ModelWeights TinyWithRoom() {
  ModelWeights w = MakeSyntheticWeights("tiny", DType::kBF16);
  w.config.max_seq_len = 2147483647;
  return w;
}

// Feeds `sequences` prompts of `rows_each` tokens as one batched call of
// the cpu pass. The prompts are made before the limit is set (by the
// caller's order), so only the pass's own reservations can run out.
void RunCpuBatch(const ModelWeights& w, int sequences, int rows_each) {
  std::vector<int32_t> prompt(static_cast<size_t>(rows_each));
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>(1 + i % 200);
  std::vector<InferenceState> states;
  states.reserve(static_cast<size_t>(sequences));
  for (int s = 0; s < sequences; ++s) states.push_back(MakeState(w.config));
  std::vector<std::vector<float>> logits(static_cast<size_t>(sequences));
  std::vector<SequenceCall> calls;
  calls.reserve(static_cast<size_t>(sequences));
  for (int s = 0; s < sequences; ++s) {
    calls.push_back(
        {&states[static_cast<size_t>(s)], prompt, false, &logits[static_cast<size_t>(s)], nullptr});
  }
  const auto& math = numerics::GetMathLibrary(numerics::MathProfile::kPortable);
  threads::ThreadPool pool(2);
  CpuOptions options;
  options.isa = kernels::BestIsa();
  auto cpu = MakeCpuForward(w, math, pool, options);
  ExitUnderLimit([&] { cpu->RunBatch(calls); }, kLimit);
}

TEST(OutOfMemoryMessageDeathTest, ABatchThatDoesNotFitBlamesTheBatch) {
  if (!kAddressSpaceLimitWorks) GTEST_SKIP() << "AddressSanitizer: no address-space limit fits";
  const ModelWeights w = TinyWithRoom();
  EXPECT_EXIT(RunCpuBatch(w, kSequences, kRowsEach), ::testing::ExitedWithCode(kOtherError),
              "out of memory for a batch of 16 sequences \\(262144 positions together, at most "
              "16384 in one;.*run a smaller --batch");
}

// The control: the same rows as one sequence blame its positions, not a
// batch, so the message above is chosen by the batch, not by the size.
TEST(OutOfMemoryMessageDeathTest, OneSequenceThatDoesNotFitBlamesItsPositions) {
  if (!kAddressSpaceLimitWorks) GTEST_SKIP() << "AddressSanitizer: no address-space limit fits";
  const ModelWeights w = TinyWithRoom();
  EXPECT_EXIT(RunCpuBatch(w, 1, kSequences * kRowsEach), ::testing::ExitedWithCode(kOtherError),
              "out of memory for 262144 positions \\(the KV cache alone needs [0-9]+ MiB.*run "
              "fewer positions");
}

}  // namespace
}  // namespace samebits::model
