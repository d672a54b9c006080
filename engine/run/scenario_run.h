// One `samebits-engine run` after its switches are resolved and its inputs
// loaded: builds the forward pass the options name, drives the scenario
// through it and writes the protocol's records (PROTOCOL.md). engine/cli's
// `run` command parses its flags into these options and calls
// RunScenarioWithRecords; nothing here reads a flag or the environment.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "engine/kernels/kernels.h"
#include "engine/model/forward.h"
#include "engine/model/tuning.h"
#include "engine/model/weights.h"
#include "engine/numerics/math.h"
#include "engine/run/batch_companions.h"
#include "engine/run/driver.h"
#include "engine/run/logit_dump.h"
#include "engine/run/scenario.h"

namespace samebits::run {

struct RunOptions {
  std::string checkpoint;  // the spec as given, recorded in `hello`
  model::KernelPath path = model::KernelPath::kCpu;
  numerics::MathProfile math = numerics::MathProfile::kPortable;
  numerics::QuantDot quant_dot = numerics::QuantDot::kExact;  // both passes'
  kernels::Isa isa = kernels::Isa::kScalar;                   // both passes' kernel table
  int threads = 1;  // the cpu pass's; the reference runs on one
  // The cpu pass's tuning knobs (model/tuning.h; those not named keep
  // CpuOptions' defaults), and `hello`'s `tuning` record of them as JSON
  // text (wisdom.h's TuningRecord; empty: none).
  model::KnobValues knobs;
  std::string tuning_record;
  // The cpu pass's tables for calls of one sequence and of several
  // (GetKernelTable(isa) both, unless a test-only control swaps one:
  // engine/cli/commands.h). Unused by the reference.
  const kernels::KernelTable* cpu_table = nullptr;
  const kernels::KernelTable* cpu_multi_sequence_table = nullptr;
  BatchOptions batch;
  bool trace = false;    // a `trace` record per op and position
  bool profile = false;  // the op profile on stderr at the end
};

// What the run reads, loaded and checked by the caller.
struct RunInputs {
  const model::ModelWeights& weights;
  const Scenario& scenario;
  const PreparedScenario& prepared;
  LogitDumpWriter* dump = nullptr;  // every output row's logits, when set
  // When the engine started (before the scenario and checkpoint were
  // read): `done` then says how long loading took (its `load_ms`).
  std::optional<std::chrono::steady_clock::time_point> started;
  // model::HashWeights(weights) when the caller knows it (a checkpoint kept
  // across the cells of `run --serve`); empty: computed here.
  std::string weights_xxh3;
};

// Runs the scenario as `options` say and writes `hello`, a `step` per
// output row (and `trace` records when asked) and `done` to `out`.
// Exceptions from the forward pass or the writers propagate.
void RunScenarioWithRecords(const RunOptions& options, const RunInputs& inputs, std::FILE* out);

}  // namespace samebits::run
