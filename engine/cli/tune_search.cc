#include "engine/cli/tune_search.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "engine/cli/bench_statistics.h"
#include "engine/cli/bench_timing.h"
#include "engine/threads/thread_pool.h"

namespace samebits::cli {
namespace {

using Clock = std::chrono::steady_clock;

// What the defaults' logits hash to: every candidate must give the same.
struct Expected {
  std::vector<uint64_t> decode;  // per step
  uint64_t prefill = 0;
};

// Returns the candidates of `knob`: its list, and `current` when the list
// lacks it (a default outside the list, or a value a flag would set).
std::vector<int64_t> CandidatesOf(const model::TuningKnob& knob, int64_t current) {
  std::vector<int64_t> values(knob.candidates.begin(), knob.candidates.end());
  if (std::find(values.begin(), values.end(), current) == values.end()) values.push_back(current);
  std::sort(values.begin(), values.end());
  return values;
}

BenchConfig MakeConfig(const model::ModelWeights& weights, const numerics::MathLibrary& math,
                       threads::ThreadPool& pool, const TuneShape& shape,
                       const model::KnobValues& knobs) {
  BenchConfig c;
  c.threads = shape.threads;
  c.options.isa = shape.isa;
  c.options.quant_dot = shape.quant_dot;
  model::ApplyKnobs(knobs, c.options);
  c.forward = model::MakeCpuForward(weights, math, pool, c.options, *shape.cpu_table);
  return c;
}

// Times every config in interleaved rounds (in order, then reversed, ...)
// of `phase`, at most shape.rounds, starting no round that would end after
// `until` (the first always runs). Returns the rounds run.
int TimeRounds(std::vector<BenchConfig>& configs, model::TunedPhase phase,
               const DecodeContext& context, const model::ModelConfig& mc, const TuneShape& shape,
               Clock::time_point until) {
  if (phase == model::TunedPhase::kDecode) {
    for (BenchConfig& c : configs) DecodeUntimed(*c.forward, context, 1);
  }
  int rounds = 0;
  Clock::duration last{0};
  while (rounds < shape.rounds && (rounds == 0 || Clock::now() + last <= until)) {
    const auto start = Clock::now();
    for (size_t k = 0; k < configs.size(); ++k) {
      BenchConfig& c = configs[rounds % 2 == 0 ? k : configs.size() - 1 - k];
      if (phase == model::TunedPhase::kDecode) {
        TimeDecode(c, context, shape.decode_steps);
      } else {
        TimePrefill(c, mc, context, shape.prompt);
      }
    }
    last = Clock::now() - start;
    ++rounds;
  }
  return rounds;
}

// Returns "" when every run of `c` gave the expected bits, else what differed.
std::string Mismatch(const BenchConfig& c, const Expected& expected) {
  for (const std::vector<uint64_t>& run : c.record.decode_hashes) {
    if (run != expected.decode) return "its decode logits differ from the defaults'";
  }
  for (uint64_t h : c.record.prefill_hashes) {
    if (h != expected.prefill) return "its prefill logits differ from the defaults'";
  }
  return "";
}

double Median(const BenchConfig& c, model::TunedPhase phase) {
  return SpreadOf(phase == model::TunedPhase::kDecode ? c.record.decode_ms : c.record.prefill_ms)
      .median;
}

// Returns the knobs worth timing for these weights: a knob only the loops
// over block-quantized weights read moves nothing on float weights (it
// keeps its value there).
std::vector<model::TuningKnob> KnobsToTime(const model::ModelWeights& weights) {
  const bool quantized = model::HasQuantizedMatrices(weights);
  std::vector<model::TuningKnob> knobs;
  for (const model::TuningKnob& knob : model::TuningKnobs()) {
    if (!knob.quantized_only || quantized) knobs.push_back(knob);
  }
  return knobs;
}

}  // namespace

TuneOutcome TuneKnobs(const model::ModelWeights& weights, const TuneShape& shape, std::FILE* out) {
  const numerics::MathLibrary& math = numerics::GetMathLibrary(shape.math);
  const model::ModelConfig& mc = weights.config;
  threads::ThreadPool pool(shape.threads);
  model::CpuOptions defaults;
  const model::KnobValues default_knobs = model::KnobsOf(defaults);
  TuneOutcome outcome;
  outcome.knobs = default_knobs;

  // The context and the bits every candidate must give, from the defaults.
  BenchConfig base = MakeConfig(weights, math, pool, shape, default_knobs);
  const DecodeContext context = MakeDecodeContext(mc, shape.context, shape.prompt, *base.forward);
  TimeDecode(base, context, shape.decode_steps);
  TimePrefill(base, mc, context, shape.prompt);
  const Expected expected{base.record.decode_hashes.front(), base.record.prefill_hashes.front()};
  base.forward.reset();

  const std::vector<model::TuningKnob> knobs = KnobsToTime(weights);
  const auto start = Clock::now();
  const auto share = (shape.deadline - start) / static_cast<int64_t>(knobs.size() + 1);
  for (size_t i = 0; i < knobs.size(); ++i) {
    const model::TuningKnob& knob = knobs[i];
    const std::string name(knob.name);
    const int64_t current = outcome.knobs.at(name);
    std::vector<int64_t> values = CandidatesOf(knob, current);
    std::vector<BenchConfig> configs;
    for (int64_t v : values) {
      model::KnobValues trial = outcome.knobs;
      trial[name] = v;
      configs.push_back(MakeConfig(weights, math, pool, shape, trial));
    }
    const int rounds = TimeRounds(configs, knob.phase, context, mc, shape,
                                  start + share * static_cast<int64_t>(i + 1));
    const bool decode = knob.phase == model::TunedPhase::kDecode;
    std::fprintf(out, "  %s, %s (median of %d round%s):", name.c_str(),
                 decode ? "decode ms per token" : "prefill ms", rounds, rounds == 1 ? "" : "s");
    size_t chosen =
        static_cast<size_t>(std::find(values.begin(), values.end(), current) - values.begin());
    const double current_ms = Median(configs[chosen], knob.phase);
    for (size_t k = 0; k < configs.size(); ++k) {
      if (const std::string why = Mismatch(configs[k], expected); !why.empty()) {
        outcome.identical = false;
        outcome.difference = name;
        outcome.difference += " " + std::to_string(values[k]) + ": " + why;
        std::fprintf(out, "\n");
        return outcome;
      }
      const double ms = Median(configs[k], knob.phase);
      std::fprintf(out, " %lld %.3f%s", static_cast<long long>(values[k]), ms,
                   values[k] == default_knobs.at(name) ? " (default)" : "");
      if (ms < current_ms * (1 - kTuneMargin) && ms < Median(configs[chosen], knob.phase)) {
        chosen = k;
      }
    }
    outcome.knobs[name] = values[chosen];
    std::fprintf(out, "; -> %lld\n", static_cast<long long>(values[chosen]));
  }

  // The tuned knobs against the defaults, side by side, both phases.
  std::vector<BenchConfig> pair;
  pair.push_back(MakeConfig(weights, math, pool, shape, default_knobs));
  pair.push_back(MakeConfig(weights, math, pool, shape, outcome.knobs));
  const auto half = (shape.deadline - Clock::now()) / 2;
  outcome.final_rounds =
      TimeRounds(pair, model::TunedPhase::kDecode, context, mc, shape, Clock::now() + half);
  TimeRounds(pair, model::TunedPhase::kPrefill, context, mc, shape, shape.deadline);
  for (const BenchConfig& c : pair) {
    if (const std::string why = Mismatch(c, expected); !why.empty()) {
      outcome.identical = false;
      outcome.difference = "the tuned knobs (" + model::KnobsText(outcome.knobs) + "): " + why;
      return outcome;
    }
  }
  outcome.default_decode_ms = Median(pair[0], model::TunedPhase::kDecode);
  outcome.tuned_decode_ms = Median(pair[1], model::TunedPhase::kDecode);
  outcome.default_prefill_ms = Median(pair[0], model::TunedPhase::kPrefill);
  outcome.tuned_prefill_ms = Median(pair[1], model::TunedPhase::kPrefill);
  std::fprintf(out,
               "  tuned (%s) against the defaults, side by side, median of %d rounds: decode "
               "%.3f vs %.3f ms per token (%.2fx), prefill %.2f vs %.2f ms (%.2fx); bits "
               "identical: yes\n",
               model::KnobsText(outcome.knobs).c_str(), outcome.final_rounds,
               outcome.tuned_decode_ms, outcome.default_decode_ms,
               outcome.default_decode_ms / outcome.tuned_decode_ms, outcome.tuned_prefill_ms,
               outcome.default_prefill_ms, outcome.default_prefill_ms / outcome.tuned_prefill_ms);
  // The side-by-side figures have the last word: a phase whose tuned knobs
  // were not faster there keeps its defaults (each knob moves one phase),
  // so noise in the per-knob rounds never makes a slower wisdom.
  for (const bool decode : {true, false}) {
    const double tuned = decode ? outcome.tuned_decode_ms : outcome.tuned_prefill_ms;
    const double plain = decode ? outcome.default_decode_ms : outcome.default_prefill_ms;
    if (tuned < plain) continue;
    std::string reverted;
    for (const model::TuningKnob& knob : knobs) {
      const std::string name(knob.name);
      if ((knob.phase == model::TunedPhase::kDecode) != decode) continue;
      if (outcome.knobs[name] == default_knobs.at(name)) continue;
      outcome.knobs[name] = default_knobs.at(name);
      reverted += (reverted.empty() ? "" : ", ") + name;
    }
    if (reverted.empty()) continue;
    if (decode) {
      outcome.tuned_decode_ms = plain;
    } else {
      outcome.tuned_prefill_ms = plain;
    }
    std::fprintf(out, "  %s was not faster side by side: %s keep%s the default\n",
                 decode ? "decode" : "prefill", reverted.c_str(),
                 reverted.find(',') == std::string::npos ? "s" : "");
  }
  return outcome;
}

}  // namespace samebits::cli
