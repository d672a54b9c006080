// The subcommands' shared helpers (commands.h).
#include "engine/cli/commands.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "engine/formats/checkpoint.h"
#include "engine/kernels/test_only_table.h"

namespace samebits::cli {
model::ModelWeights LoadCheckpointForCommand(const std::string& spec) {
  // A harness running many cells of one synthetic checkpoint names a cache
  // folder, so that they synthesise it once (formats/synthetic_cache.h).
  const char* cache = std::getenv("SAMEBITS_SYNTHETIC_CACHE");
  try {
    return formats::LoadCheckpoint(spec, cache != nullptr ? cache : "");
  } catch (const formats::CheckpointError& e) {
    throw UsageError(e.what());
  }
}

bool ProfileRequestedByEnvironment() {
  const char* value = std::getenv("SAMEBITS_PROFILE");
  return value != nullptr && std::string_view(value) == "1";
}

const kernels::KernelTable& CpuPassKernelTable(kernels::Isa isa) {
  const char* value = std::getenv("SAMEBITS_TEST_ONLY_BREAK_IDENTITY");
  if (value == nullptr || std::string_view(value) != "1") return kernels::GetKernelTable(isa);
  std::fprintf(stderr,
               "samebits: SAMEBITS_TEST_ONLY_BREAK_IDENTITY=1: the cpu pass sums attention in "
               "a forbidden order and its logits WILL differ; unset it outside the tests\n");
  return kernels::TestOnlyReversedAttentionTable(isa);
}

const kernels::KernelTable& CpuPassMultiSequenceKernelTable(kernels::Isa isa,
                                                            const kernels::KernelTable& single) {
  const char* value = std::getenv("SAMEBITS_TEST_ONLY_BREAK_BATCH_INVARIANCE");
  if (value == nullptr || std::string_view(value) != "1") return single;
  std::fprintf(stderr,
               "samebits: SAMEBITS_TEST_ONLY_BREAK_BATCH_INVARIANCE=1: the cpu pass splits the "
               "matrix reductions of batched calls and their logits WILL differ; unset it "
               "outside the tests\n");
  return kernels::TestOnlySplitReductionTable(isa);
}

}  // namespace samebits::cli
