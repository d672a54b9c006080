// The tuning knobs' flags (model/tuning.h) and `--wisdom`, shared by `run`,
// `bench` and `tune`: one flag per knob, generated from the knob list, and
// the resolution of a run's knobs: a flag given wins, then the wisdom
// file's entry for this machine and work, then the engine's default.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "engine/kernels/kernels.h"
#include "engine/model/tuning.h"
#include "engine/model/weights.h"
#include "engine/numerics/int8_dot.h"
#include "engine/run/wisdom.h"

namespace samebits::cli {

struct TuningFlags {
  model::KnobValues given;  // the knobs' flags that were given
  std::string wisdom;       // --wisdom: "", "none" or a file
};

// Adds every knob's flag and --wisdom to `sub`; they fill `*flags`.
void AddTuningFlags(CLI::App* sub, const std::shared_ptr<TuningFlags>& flags);

// The knobs a cpu pass runs with and where they came from.
struct ResolvedTuning {
  model::KnobValues knobs;  // every knob
  run::WisdomChoice wisdom;
};

// Returns the wisdom key of this machine for a run of `weights` with
// `isa`, `quant_dot` and `threads`.
run::WisdomKey ThisWisdomKey(const model::ModelWeights& weights, kernels::Isa isa,
                             numerics::QuantDot quant_dot, int threads);

// Resolves the knobs of a cpu pass as the header says. Throws UsageError
// when the wisdom file is unreadable or malformed.
ResolvedTuning ResolveTuning(const TuningFlags& flags, const run::WisdomKey& key);

}  // namespace samebits::cli
