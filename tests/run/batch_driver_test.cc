// Batch invariance (clause 7 of the contract): the scenario's sequence run
// beside companions (run::RunBatchedScenario, model::Forward::RunBatch on
// the cpu pass) gives the logits of batch 1 bit for bit (memcmp) at every
// step, and the same trace hashes, on synthetic dense, MoE, wide and
// quantized checkpoints, every available ISA, batches of 2, 4 and 8, two
// seeds and both schedules, and on a real checkpoint; the companions give
// the logits of their own solo runs. A negative control (a split reduction
// in batched calls only) shows the comparison can fail.
#include "engine/run/batch_driver.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/formats/checkpoint.h"
#include "engine/kernels/kernels.h"
#include "engine/kernels/test_only_table.h"
#include "engine/model/forward.h"
#include "engine/threads/thread_pool.h"
#include "tests/run/run_test_helpers.h"
#include "tests/support/data_folder.h"

namespace samebits::run {
namespace {

using test_support::LoadDefault;
using test_support::Math;

// One companion's forward calls: what it fed and its output row's logits.
struct CompanionCalls {
  std::vector<std::vector<int32_t>> tokens;
  std::vector<std::vector<float>> logits;
};

// What a run reported.
struct Recorded {
  std::vector<std::vector<float>> logits;  // per step
  std::vector<std::optional<BatchPlace>> places;
  std::vector<TraceResult> traces;
  std::map<int, CompanionCalls> companions;
};

Recorded Drive(const model::ModelWeights& w, model::Forward& forward, const Scenario& scenario,
               const BatchOptions& options) {
  const PreparedScenario prepared = PrepareScenario(scenario, w.config);
  Recorded out;
  DriverSinks sinks;
  sinks.on_step = [&](const StepResult& s) {
    out.logits.emplace_back(s.logits.begin(), s.logits.end());
    out.places.push_back(s.batch);
  };
  sinks.on_trace = [&](const TraceResult& t) { out.traces.push_back(t); };
  sinks.on_companion = [&](const CompanionCall& c) {
    CompanionCalls& calls = out.companions[c.companion];
    calls.tokens.emplace_back(c.tokens.begin(), c.tokens.end());
    calls.logits.emplace_back(c.logits.begin(), c.logits.end());
  };
  const RunSummary summary =
      RunBatchedScenario(prepared, w.config, forward, Math(), options, sinks);
  EXPECT_EQ(summary.steps, prepared.total_steps);
  return out;
}

// Returns "" when `b` has `a`'s logits (memcmp) and trace hashes at every
// step, else the first difference.
std::string FirstDifference(const Recorded& a, const Recorded& b) {
  if (a.logits.size() != b.logits.size()) return "different step counts";
  for (size_t i = 0; i < a.logits.size(); ++i) {
    if (a.logits[i].size() != b.logits[i].size() ||
        std::memcmp(a.logits[i].data(), b.logits[i].data(), a.logits[i].size() * sizeof(float)) !=
            0) {
      return "logits differ at step " + std::to_string(i);
    }
  }
  if (a.traces.size() != b.traces.size()) return "different trace record counts";
  for (size_t i = 0; i < a.traces.size(); ++i) {
    const TraceResult &x = a.traces[i], &y = b.traces[i];
    if (x.position != y.position || x.layer != y.layer || x.op != y.op || x.xxh3_64 != y.xxh3_64) {
      return "trace record " + std::to_string(i) + " (" + x.op + " at position " +
             std::to_string(x.position) + ") differs";
    }
  }
  return "";
}

// Returns "" when every companion's logits equal those of feeding its
// calls alone through `forward`, else the first difference.
std::string CompanionsDifferFromSolo(const model::ModelWeights& w, model::Forward& forward,
                                     const Recorded& run) {
  for (const auto& [id, calls] : run.companions) {
    model::InferenceState state = model::MakeState(w.config);
    std::vector<float> logits;
    for (size_t c = 0; c < calls.tokens.size(); ++c) {
      forward.Run(state, calls.tokens[c], false, logits, nullptr);
      if (logits.size() != calls.logits[c].size() ||
          std::memcmp(logits.data(), calls.logits[c].data(), logits.size() * sizeof(float)) != 0) {
        return "companion " + std::to_string(id) + " differs from its solo run at call " +
               std::to_string(c);
      }
    }
  }
  return "";
}

// Returns the cpu pass on `isa`; with `small_tiles`, GEMM tiles of 3 rows
// and attention blocks of 5, which cut across the sequences' rows (costly
// on the wide checkpoint, whose weights each tile reads again).
std::unique_ptr<model::Forward> Cpu(const model::ModelWeights& w, threads::ThreadPool& pool,
                                    kernels::Isa isa, bool small_tiles = true) {
  model::CpuOptions options;
  options.isa = isa;
  if (small_tiles) {
    options.gemm_tile_m = 3;
    options.attention_row_block = 5;
  }
  return model::MakeCpuForward(w, Math(), pool, options);
}

// Runs the classic scenario at every batch, seed and schedule against
// batch 1, on every ISA of `isas` (default: every available one), and (when
// asked) the companions against their solo runs.
void ExpectBatchInvariant(const std::string& spec, const std::vector<int>& batches,
                          const std::vector<uint64_t>& seeds, bool check_companions,
                          bool small_tiles = true,
                          const std::vector<kernels::Isa>& isas = kernels::AvailableIsas()) {
  const model::ModelWeights w = formats::LoadCheckpoint(spec);
  const Scenario scenario = LoadDefault("classic");
  threads::ThreadPool pool(2);
  for (const kernels::Isa isa : isas) {
    auto forward = Cpu(w, pool, isa, small_tiles);
    const Recorded alone = Drive(w, *forward, scenario, BatchOptions{});
    for (const auto& place : alone.places) EXPECT_FALSE(place.has_value());
    ASSERT_FALSE(alone.traces.empty());
    for (const int batch : batches) {
      for (const uint64_t seed : seeds) {
        for (const BatchSchedule schedule : {BatchSchedule::kTogether, BatchSchedule::kStaggered}) {
          const BatchOptions options{batch, seed, schedule};
          SCOPED_TRACE(spec + " " + kernels::IsaName(isa) + " batch " + std::to_string(batch) +
                       " seed " + std::to_string(seed) + " " + BatchScheduleName(schedule));
          const Recorded batched = Drive(w, *forward, scenario, options);
          EXPECT_EQ(FirstDifference(alone, batched), "");
          EXPECT_FALSE(batched.companions.empty());
          for (const auto& place : batched.places) {
            ASSERT_TRUE(place.has_value());
            EXPECT_LE(place->sequences, batch);
            EXPECT_LT(place->slot, place->sequences);
            EXPECT_LT(place->row, place->rows);
          }
          if (check_companions) {
            EXPECT_EQ(CompanionsDifferFromSolo(w, *forward, batched), "");
          }
        }
      }
    }
  }
}

TEST(BatchDriverTest, TinyIsBatchInvariant) {
  ExpectBatchInvariant("synthetic:tiny", {2, 4, 8}, {1, 2}, true);
}

TEST(BatchDriverTest, MediumMoeIsBatchInvariant) {
  ExpectBatchInvariant("synthetic:medium", {2, 4, 8}, {1, 2}, true);
}

// The wide checkpoint (88M weights, a 32000-token vocabulary) costs minutes
// on the scalar table at full breadth: the full matrix runs on the best ISA,
// the others check batches 2 and 8 with one seed.
TEST(BatchDriverTest, WideIsBatchInvariant) {
  const kernels::Isa best = kernels::BestIsa();
  ExpectBatchInvariant("synthetic:wide", {2, 4, 8}, {1, 2}, false, /*small_tiles=*/false, {best});
  for (const kernels::Isa isa : kernels::AvailableIsas()) {
    if (isa != best) ExpectBatchInvariant("synthetic:wide", {2, 8}, {1}, false, false, {isa});
  }
}

TEST(BatchDriverTest, QuantizedMediumIsBatchInvariant) {
  ExpectBatchInvariant("synthetic:medium-q8_0", {2, 4, 8}, {1, 2}, true);
}

// Real checkpoints: a quantized dense Qwen3 and a Mixtral-style MoE.
TEST(BatchDriverTest, RealCheckpointsAreBatchInvariant) {
  const std::string dir = data_folder::Path("checkpoints") + "/";
  for (const char* name : {"small_dense_qwen3_q8_0.gguf", "tiny_moe_mixtral_f32.gguf"}) {
    SAMEBITS_SKIP_WITHOUT_DATA(dir + name);
  }
  for (const char* name : {"small_dense_qwen3_q8_0.gguf", "tiny_moe_mixtral_f32.gguf"}) {
    ExpectBatchInvariant("gguf:" + dir + name, {4}, {1}, true);
  }
}

TEST(BatchDriverTest, TheReferencePassRunsABatchAsSolo) {
  const model::ModelWeights w = formats::LoadCheckpoint("synthetic:tiny");
  auto reference = model::MakeReferenceForward(w, Math());
  const Scenario scenario = LoadDefault("classic");
  const Recorded alone = Drive(w, *reference, scenario, BatchOptions{});
  const Recorded batched =
      Drive(w, *reference, scenario, BatchOptions{4, 3, BatchSchedule::kStaggered});
  EXPECT_EQ(FirstDifference(alone, batched), "");
  EXPECT_EQ(CompanionsDifferFromSolo(w, *reference, batched), "");
}

TEST(BatchDriverTest, StaggeredMovesTheScenarioAcrossSlots) {
  const model::ModelWeights w = formats::LoadCheckpoint("synthetic:tiny");
  threads::ThreadPool pool(1);
  auto forward = Cpu(w, pool, kernels::BestIsa());
  const Scenario scenario = LoadDefault("classic");
  const Recorded run = Drive(w, *forward, scenario, BatchOptions{8, 1, BatchSchedule::kStaggered});
  std::set<int> slots, sequences;
  for (const auto& place : run.places) {
    slots.insert(place->slot);
    sequences.insert(place->sequences);
  }
  EXPECT_GT(slots.size(), 1u);
  EXPECT_GT(sequences.size(), 1u) << "companions should join and leave";
}

TEST(BatchDriverTest, CompanionPlansFollowTheSchedule) {
  const model::ModelConfig config = formats::LoadCheckpoint("synthetic:tiny").config;
  const int calls = 8;
  const auto together = PlanCompanions({4, 1, BatchSchedule::kTogether}, config, calls);
  ASSERT_EQ(together.size(), 3u);
  std::set<size_t> lengths;
  for (const CompanionPlan& p : together) {
    EXPECT_EQ(p.join, 0);
    EXPECT_EQ(p.decodes, calls - 1);
    lengths.insert(p.prompt.size());
  }
  EXPECT_GT(lengths.size(), 1u) << "prompts of different lengths";

  const BatchOptions staggered{4, 1, BatchSchedule::kStaggered};
  const auto plans = PlanCompanions(staggered, config, calls);
  EXPECT_GT(plans.size(), 3u) << "freed slots are refilled";
  std::map<int, int> free_from;  // per slot: the first call after its last companion
  for (const CompanionPlan& p : plans) {
    EXPECT_GE(p.join, free_from[p.slot]) << "two companions in one slot";
    free_from[p.slot] = p.join + p.decodes + 1;
    EXPECT_LE(static_cast<int>(p.prompt.size()) + p.decodes, config.max_seq_len);
    for (const int32_t id : p.prompt) EXPECT_LT(id, config.vocab_size);
  }
  EXPECT_EQ(PlanCompanions(staggered, config, calls).front().prompt, plans.front().prompt);
  EXPECT_NE(PlanCompanions({4, 2, BatchSchedule::kStaggered}, config, calls).front().prompt,
            plans.front().prompt);
  EXPECT_THROW(PlanCompanions({0, 1, BatchSchedule::kTogether}, config, calls),
               std::invalid_argument);
  EXPECT_THROW(PlanCompanions({kMaxBatch + 1, 1, BatchSchedule::kTogether}, config, calls),
               std::invalid_argument);
}

// The negative control: a split reduction in calls of several sequences.
// Batch 1 never meets it; a batched run must differ.
TEST(BatchDriverTest, ASplitReductionInBatchedCallsIsCaught) {
  const model::ModelWeights w = formats::LoadCheckpoint("synthetic:tiny");
  const Scenario scenario = LoadDefault("classic");
  threads::ThreadPool pool(2);
  const kernels::Isa isa = kernels::BestIsa();
  auto exact = Cpu(w, pool, isa);
  auto broken = model::MakeCpuForward(w, Math(), pool, model::CpuOptions{.isa = isa},
                                      kernels::GetKernelTable(isa),
                                      kernels::TestOnlySplitReductionTable(isa));
  const Recorded alone = Drive(w, *exact, scenario, BatchOptions{});
  EXPECT_EQ(FirstDifference(alone, Drive(w, *broken, scenario, BatchOptions{})), "");
  for (const BatchSchedule schedule : {BatchSchedule::kTogether, BatchSchedule::kStaggered}) {
    EXPECT_NE(FirstDifference(alone, Drive(w, *broken, scenario, BatchOptions{4, 1, schedule})),
              "");
  }
}

TEST(BatchDriverTest, OneStateTwiceInABatchIsRefused) {
  const model::ModelWeights w = formats::LoadCheckpoint("synthetic:tiny");
  threads::ThreadPool pool(1);
  auto forward = Cpu(w, pool, kernels::Isa::kScalar);
  model::InferenceState state = model::MakeState(w.config);
  std::vector<float> a, b;
  const std::vector<int32_t> tokens = {1, 2};
  const model::SequenceCall calls[] = {{&state, tokens, false, &a, nullptr},
                                       {&state, tokens, false, &b, nullptr}};
  EXPECT_THROW(forward->RunBatch(calls), std::invalid_argument);
  EXPECT_EQ(state.n_past, 0) << "nothing is fed when the batch is refused";
}

}  // namespace
}  // namespace samebits::run
