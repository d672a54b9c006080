#include "engine/run/batch_companions.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "engine/numerics/splitmix.h"

namespace samebits::run {
namespace {

// Stream salts, so the plan and the row orders draw independent numbers.
constexpr uint64_t kPlanSalt = 0x636f6d70616e696fULL;   // "companio"
constexpr uint64_t kOrderSalt = 0x726f776f72646572ULL;  // "roworder"

// The longest companion prompt: long enough for a prefill of several rows
// (GEMM tiles, attention blocks), short enough to keep positions modest.
constexpr int kMaxCompanionPrompt = 24;
// A staggered companion decodes 0 .. kMaxStaggeredDecodes times, and a
// freed slot waits 0 .. kMaxStaggeredGap calls before it is refilled.
constexpr int kMaxStaggeredDecodes = 5;
constexpr int kMaxStaggeredGap = 2;

// Returns a number in [lo, hi] from `rng` (the modulo bias is irrelevant).
int Between(numerics::SplitMix64Stream& rng, int lo, int hi) {
  return lo + static_cast<int>(rng.Next() % static_cast<uint64_t>(hi - lo + 1));
}

}  // namespace

const char* BatchScheduleName(BatchSchedule schedule) {
  return schedule == BatchSchedule::kStaggered ? "staggered" : "together";
}

bool ParseBatchSchedule(const std::string& name, BatchSchedule* out) {
  if (name == "together")
    *out = BatchSchedule::kTogether;
  else if (name == "staggered")
    *out = BatchSchedule::kStaggered;
  else
    return false;
  return true;
}

std::vector<CompanionPlan> PlanCompanions(const BatchOptions& options,
                                          const model::ModelConfig& config, int calls) {
  if (options.batch < 1 || options.batch > kMaxBatch) {
    throw std::invalid_argument("batch " + std::to_string(options.batch) + " is outside [1, " +
                                std::to_string(kMaxBatch) + "]");
  }
  numerics::SplitMix64Stream rng(options.seed ^ kPlanSalt);
  const bool staggered = options.schedule == BatchSchedule::kStaggered;
  const int longest = std::max(1, std::min(kMaxCompanionPrompt, config.max_seq_len));
  std::vector<CompanionPlan> plans;
  for (int slot = 0; slot + 1 < options.batch; ++slot) {
    int join = staggered ? Between(rng, 0, kMaxStaggeredGap) : 0;
    while (join < calls) {
      CompanionPlan plan;
      plan.slot = slot;
      plan.join = join;
      plan.prompt.resize(static_cast<size_t>(Between(rng, 1, longest)));
      for (int32_t& id : plan.prompt) {
        id = static_cast<int32_t>(rng.Next() % static_cast<uint64_t>(config.vocab_size));
      }
      const int wanted = staggered ? Between(rng, 0, kMaxStaggeredDecodes) : calls - 1 - join;
      const int room = config.max_seq_len - static_cast<int>(plan.prompt.size());
      plan.decodes = std::max(0, std::min({wanted, room, calls - 1 - join}));
      plans.push_back(std::move(plan));
      if (!staggered) break;
      join += 1 + plans.back().decodes + Between(rng, 0, kMaxStaggeredGap);
    }
  }
  // Ids in order of joining, then slot: a reader sees companion 0 first.
  std::stable_sort(plans.begin(), plans.end(), [](const CompanionPlan& a, const CompanionPlan& b) {
    return a.join != b.join ? a.join < b.join : a.slot < b.slot;
  });
  for (size_t i = 0; i < plans.size(); ++i) plans[i].id = static_cast<int>(i);
  return plans;
}

std::vector<int> RowOrder(const BatchOptions& options, int call, int count) {
  std::vector<int> order(static_cast<size_t>(std::max(count, 0)));
  std::iota(order.begin(), order.end(), 0);
  const uint64_t draw = options.schedule == BatchSchedule::kStaggered ? uint64_t(call) : 0;
  numerics::SplitMix64Stream rng(numerics::SplitMix64At(options.seed ^ kOrderSalt, draw));
  // Fisher-Yates, from the last entry down.
  for (int i = count - 1; i > 0; --i) {
    std::swap(order[i], order[static_cast<size_t>(rng.Next() % static_cast<uint64_t>(i + 1))]);
  }
  return order;
}

}  // namespace samebits::run
