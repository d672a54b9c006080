// The subcommands' shared helpers (commands.h).
#include "engine/cli/commands.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "engine/formats/checkpoint.h"
#include "engine/kernels/test_only_table.h"
#include "engine/model/tensor_spec.h"

namespace samebits::cli {
namespace {

// The checkpoint KeepLastSyntheticCheckpoint keeps, and its weights' hash.
struct KeptCheckpoint {
  bool enabled = false;
  std::string spec;
  std::optional<model::ModelWeights> weights;
  std::string weights_xxh3;
};

KeptCheckpoint& Kept() {
  static KeptCheckpoint kept;
  return kept;
}

}  // namespace

model::ModelWeights LoadCheckpointForCommand(const std::string& spec) {
  KeptCheckpoint& kept = Kept();
  const bool keep = kept.enabled && spec.rfind("synthetic:", 0) == 0;
  if (keep && kept.weights && kept.spec == spec) return *kept.weights;
  // A harness running many cells of one synthetic checkpoint names a cache
  // folder, so that they synthesise it once (formats/synthetic_cache.h).
  const char* cache = std::getenv("SAMEBITS_SYNTHETIC_CACHE");
  model::ModelWeights weights;
  try {
    weights = formats::LoadCheckpoint(spec, cache != nullptr ? cache : "");
  } catch (const formats::CheckpointError& e) {
    throw UsageError(e.what());
  }
  if (keep) {
    kept.spec = spec;
    kept.weights = weights;  // shares the storage
    kept.weights_xxh3.clear();
  }
  return weights;
}

void KeepLastSyntheticCheckpoint() {
  Kept().enabled = true;
}

std::string WeightsHashForCommand(const model::ModelWeights& weights) {
  KeptCheckpoint& kept = Kept();
  const bool is_kept =
      kept.weights && kept.weights->storage == weights.storage && kept.weights->storage != nullptr;
  if (!is_kept) return model::HashWeights(weights);
  if (kept.weights_xxh3.empty()) kept.weights_xxh3 = model::HashWeights(weights);
  return kept.weights_xxh3;
}

bool ProfileRequestedByEnvironment() {
  const char* value = std::getenv("SAMEBITS_PROFILE");
  return value != nullptr && std::string_view(value) == "1";
}

namespace {

// The test-only tables (kernels/test_only_table.h) are built on the exact
// profile's products; in the int8 profile they would not be the control
// they claim to be.
void RefuseTestOnlyControlOutsideExact(numerics::QuantDot quant_dot) {
  if (quant_dot != numerics::QuantDot::kExact) {
    throw std::invalid_argument(
        "the SAMEBITS_TEST_ONLY_* controls run in the exact --quant-dot profile only");
  }
}

}  // namespace

const kernels::KernelTable& CpuPassKernelTable(kernels::Isa isa, numerics::QuantDot quant_dot) {
  const char* value = std::getenv("SAMEBITS_TEST_ONLY_BREAK_IDENTITY");
  if (value == nullptr || std::string_view(value) != "1") {
    return kernels::GetKernelTable(isa, quant_dot);
  }
  RefuseTestOnlyControlOutsideExact(quant_dot);
  std::fprintf(stderr,
               "samebits: SAMEBITS_TEST_ONLY_BREAK_IDENTITY=1: the cpu pass sums attention in "
               "a forbidden order and its logits WILL differ; unset it outside the tests\n");
  return kernels::TestOnlyReversedAttentionTable(isa);
}

const kernels::KernelTable& CpuPassMultiSequenceKernelTable(kernels::Isa isa,
                                                            const kernels::KernelTable& single) {
  const char* value = std::getenv("SAMEBITS_TEST_ONLY_BREAK_BATCH_INVARIANCE");
  if (value == nullptr || std::string_view(value) != "1") return single;
  RefuseTestOnlyControlOutsideExact(single.quant_dot);
  std::fprintf(stderr,
               "samebits: SAMEBITS_TEST_ONLY_BREAK_BATCH_INVARIANCE=1: the cpu pass splits the "
               "matrix reductions of batched calls and their logits WILL differ; unset it "
               "outside the tests\n");
  return kernels::TestOnlySplitReductionTable(isa);
}

}  // namespace samebits::cli
