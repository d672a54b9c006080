// `samebits-engine tune`'s search, for one checkpoint at one thread count:
// each tuning knob in turn (model/tuning.h), its candidates timed against
// each other in interleaved rounds with the other knobs at their best so
// far (decode knobs by decode steps, prefill knobs by a prefill), then the
// tuned knobs against the defaults, side by side. Every configuration's
// logits are hashed as it is timed: a candidate that gives other bits
// than the defaults breaks the numeric contract and fails the search.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "engine/kernels/kernels.h"
#include "engine/model/tuning.h"
#include "engine/model/weights.h"
#include "engine/numerics/math.h"

namespace samebits::cli {

struct TuneShape {
  numerics::MathProfile math = numerics::MathProfile::kPortable;
  numerics::QuantDot quant_dot = numerics::QuantDot::kExact;
  kernels::Isa isa = kernels::Isa::kScalar;
  const kernels::KernelTable* cpu_table = nullptr;
  int threads = 1;
  int context = 64;      // decode is timed after this many tokens
  int decode_steps = 8;  // per decode run
  int prompt = 64;       // tokens per prefill run
  int rounds = 5;        // the most interleaved rounds per comparison
  // A comparison starts no round that would end after its share of this
  // deadline; it runs at least one.
  std::chrono::steady_clock::time_point deadline;
};

struct TuneOutcome {
  model::KnobValues knobs;       // the winners
  bool identical = true;         // every candidate gave the defaults' bits
  std::string difference;        // the first candidate that did not, when one did
  double default_decode_ms = 0;  // per token, median, defaults vs tuned side by side
  double tuned_decode_ms = 0;
  double default_prefill_ms = 0;  // per prompt
  double tuned_prefill_ms = 0;
  int final_rounds = 0;
};

// Searches the knobs as the header says and prints each comparison to
// `out`. A candidate replaces the best so far only when its median is at
// least kTuneMargin faster, so noise does not move a knob off its default;
// and when the tuned knobs of a phase (decode or prefill) are not faster
// than the defaults in the final side-by-side rounds, that phase's knobs
// go back to their defaults (its tuned figure is then the default's).
TuneOutcome TuneKnobs(const model::ModelWeights& weights, const TuneShape& shape, std::FILE* out);

inline constexpr double kTuneMargin = 0.02;

}  // namespace samebits::cli
