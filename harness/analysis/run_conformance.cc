// Conformance of two runs (run_conformance.h).
#include "harness/analysis/run_conformance.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "harness/analysis/logit_difference.h"
#include "harness/analysis/ulp.h"

namespace samebits::harness {
namespace {

using Key = std::pair<std::string, std::string>;  // checkpoint, scenario

// Returns the keys of both runs' cells, A's first, each once, in run order.
std::vector<Key> Keys(const RunResult& a, const RunResult& b) {
  std::vector<Key> keys;
  for (const RunResult* run : {&a, &b}) {
    for (const CellResult& c : run->cells) {
      const Key k{c.checkpoint, c.scenario};
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
  }
  return keys;
}

bool Usable(const CellResult& c) {
  return c.code == ResultCode::kPass &&
         (!c.dump_path.empty() || (c.dump && !c.dump->values.empty()));
}

// Returns the cell of `run` for `key` named `config`, or (when `config` is
// empty) the first usable one, else the first one; nullptr when none.
const CellResult* Choose(const RunResult& run, const Key& key, const std::string& config) {
  const CellResult* first = nullptr;
  const CellResult* first_usable = nullptr;
  for (const CellResult& c : run.cells) {
    if (c.checkpoint != key.first || c.scenario != key.second) continue;
    if (!config.empty()) {
      if (c.config.name == config) return &c;
      continue;
    }
    if (first == nullptr) first = &c;
    if (first_usable == nullptr && Usable(c)) first_usable = &c;
  }
  return first_usable != nullptr ? first_usable : first;
}

std::string EngineOf(const CellResult& c) {
  if (!c.build) return "";
  return c.build->engine + (c.build->version.empty() ? "" : " " + c.build->version);
}

// Returns why `c` (side `side`) cannot be measured, or "".
std::string Unusable(const CellResult& c, const char* side) {
  const std::string who = std::string(side) + "'s cell " + c.config.name;
  if (c.code != ResultCode::kPass) {
    return who + " is " + ResultCodeName(c.code) + (c.message.empty() ? "" : ": " + c.message);
  }
  if (!Usable(c)) {
    return who +
           " has no raw logit dump (run it with --dump-logits, or export its bundle with its "
           "rows)";
  }
  return "";
}

// Returns how steps `x` and `y` feed different contexts, or "" when they
// feed the same (same kind, position and input token). With `forced_b`, B's
// single-token extends stand for A's decodes (forced_scenario.h).
std::string ContextDifference(const StepRecord& x, const StepRecord& y, bool forced_b) {
  std::ostringstream why;
  const bool same_kind = x.kind == y.kind || (forced_b && x.kind == "decode" && y.kind == "extend");
  if (!same_kind) why << "kind " << x.kind << " (A) vs " << y.kind << " (B)";
  if (x.position != y.position) {
    why << (why.tellp() > 0 ? ", " : "") << "position " << x.position << " (A) vs " << y.position
        << " (B)";
  }
  if (x.input_token != y.input_token) {
    why << (why.tellp() > 0 ? ", " : "") << "input token " << x.input_token << " (A) vs "
        << y.input_token << " (B) at position " << x.position;
  }
  return why.str();
}

void Measure(const CellResult& a, const CellResult& b, const ConformOptions& options, bool forced_b,
             PairConformance* pair) {
  const std::optional<harness::LogitDump> dump_a = LoadCellDump(a, options.dump_base_dir);
  const std::optional<harness::LogitDump> dump_b = LoadCellDump(b, options.dump_base_dir);
  if (!dump_a || !dump_b) {
    pair->reason = "a side has no logit rows";
    return;
  }
  if (dump_a->vocab_size != dump_b->vocab_size) {
    pair->reason = "the logit rows differ in length: " + std::to_string(dump_a->vocab_size) +
                   " values (A) vs " + std::to_string(dump_b->vocab_size) + " (B)";
    return;
  }
  ConformanceMeter meter(options.threshold);
  const size_t n = std::min(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < n; ++i) {
    if (std::string why = ContextDifference(a.steps[i], b.steps[i], forced_b); !why.empty()) {
      why += "; their logits come from different contexts";
      if (i > 0) {
        const StepRecord& prev_a = a.steps[i - 1];
        const StepRecord& prev_b = b.steps[i - 1];
        if (prev_a.token != prev_b.token) {
          why += " (step " + std::to_string(prev_a.index) + " chose token " +
                 std::to_string(prev_a.token) + " (A) vs " + std::to_string(prev_b.token) + " (B))";
        }
      }
      pair->divergence = ContextDivergence{a.steps[i].index, why};
      break;
    }
    meter.AddStep(a.steps[i].index, dump_a->Row(static_cast<int64_t>(i)),
                  dump_b->Row(static_cast<int64_t>(i)));
  }
  if (a.steps.size() != b.steps.size()) {
    pair->notes.push_back(std::to_string(a.steps.size()) + " steps (A) vs " +
                          std::to_string(b.steps.size()) + " (B)");
  }
  if (!a.weights_xxh3.empty() && !b.weights_xxh3.empty() && a.weights_xxh3 != b.weights_xxh3) {
    pair->notes.push_back("the engines report different weights hashes (" + a.weights_xxh3 +
                          " vs " + b.weights_xxh3 +
                          "): the same file only if the engines hash weights differently");
  }
  pair->steps = meter.Steps();
  pair->summary = meter.Summary();
  pair->compared = pair->summary.steps > 0;
  if (!pair->compared) pair->reason = "no step fed the same context on both sides";
}

// Measures `b` against `a`; where their contexts diverge and B can be
// rerun, measures the rerun with A's tokens forced instead.
void MeasureOrForce(const CellResult& a, const CellResult& b, const ConformOptions& options,
                    PairConformance* pair) {
  Measure(a, b, options, /*forced_b=*/false, pair);
  if (!pair->divergence || !options.rerun_b_forced) return;
  const CellResult forced = options.rerun_b_forced(a, b);
  if (std::string why = Unusable(forced, "B"); !why.empty()) {
    pair->notes.push_back("B could not be rerun with A's tokens forced: " + why);
    return;
  }
  PairConformance again;
  again.checkpoint = pair->checkpoint;
  again.scenario = pair->scenario;
  again.config_a = pair->config_a;
  again.config_b = pair->config_b;
  again.engine_a = pair->engine_a;
  again.engine_b = pair->engine_b;
  again.steps_a = pair->steps_a;
  again.steps_b = static_cast<int>(forced.steps.size());
  Measure(a, forced, options, /*forced_b=*/true, &again);
  again.forced = pair->divergence;
  *pair = std::move(again);
}

std::string Short(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", x);
  return text;
}

}  // namespace

int RunConformance::ExitCode() const {
  if (conform + deviate == 0) return 2;
  return deviate > 0 ? 1 : 0;
}

const char* PairVerdictName(const PairConformance& pair) {
  if (!pair.compared) return "NOT COMPARED";
  return ConformanceVerdictName(pair.summary);
}

std::string PairVerdictLine(const PairConformance& pair) {
  if (!pair.compared) return "NOT COMPARED";
  return ConformanceVerdictLine(pair.summary);
}

std::string DescribeCoverage(const PairConformance& pair) {
  if (!pair.compared) return "no step";
  const std::string range = pair.summary.steps == 1
                                ? "step " + std::to_string(pair.steps.front().step_index)
                                : "steps " + std::to_string(pair.steps.front().step_index) + "-" +
                                      std::to_string(pair.steps.back().step_index);
  std::string text = range + " of " + std::to_string(pair.steps_a);
  if (pair.forced) {
    text += " (B's own continuation diverged at step " + std::to_string(pair.forced->step_index) +
            ": " + pair.forced->detail +
            "; B was rerun with A's tokens forced, so every step compares the same context)";
  }
  if (pair.divergence) {
    text += " (the contexts diverge at step " + std::to_string(pair.divergence->step_index) + ": " +
            pair.divergence->detail +
            "; the later steps are not compared: that needs B rerun with A's tokens forced, which "
            "`samebits conform` does when B is given as an engine, engine:NAME)";
  }
  return text;
}

RunConformance ConformRuns(const RunResult& a, const RunResult& b, const std::string& label_a,
                           const std::string& label_b, const ConformOptions& options) {
  RunConformance out;
  out.label_a = label_a;
  out.label_b = label_b;
  out.threshold = options.threshold;
  for (const Key& key : Keys(a, b)) {
    PairConformance pair;
    pair.checkpoint = key.first;
    pair.scenario = key.second;
    const CellResult* ca = Choose(a, key, options.config_a);
    const CellResult* cb = nullptr;
    if (ca != nullptr) {
      cb = Choose(b, key, options.config_b.empty() ? ca->config.name : options.config_b);
      if (cb == nullptr && options.config_b.empty()) cb = Choose(b, key, "");
    }
    if (ca != nullptr) {
      pair.config_a = ca->config.name;
      pair.engine_a = EngineOf(*ca);
      pair.steps_a = static_cast<int>(ca->steps.size());
    }
    if (cb != nullptr) {
      pair.config_b = cb->config.name;
      pair.engine_b = EngineOf(*cb);
      pair.steps_b = static_cast<int>(cb->steps.size());
    }
    if (ca == nullptr || cb == nullptr) {
      const bool a_missing = ca == nullptr;
      const std::string& config = a_missing ? options.config_a : options.config_b;
      pair.reason = std::string(a_missing ? "A" : "B") + " has no cell of this checkpoint and " +
                    "scenario" + (config.empty() ? "" : " named " + config);
    } else if (std::string why = Unusable(*ca, "A"); !why.empty()) {
      pair.reason = why;
    } else if (std::string why_b = Unusable(*cb, "B"); !why_b.empty()) {
      pair.reason = why_b;
    } else if (std::string mismatch = ScenarioContentMismatch(*ca, *cb); !mismatch.empty()) {
      pair.reason = mismatch;
    } else {
      MeasureOrForce(*ca, *cb, options, &pair);
    }
    if (!pair.compared) {
      ++out.not_compared;
    } else if (pair.summary.Conforms()) {
      ++out.conform;
    } else {
      ++out.deviate;
    }
    out.pairs.push_back(std::move(pair));
  }
  const std::string threshold = "NMSE <= " + Short(options.threshold.max_nmse);
  if (out.conform + out.deviate == 0) {
    out.headline =
        "Nothing compared: no checkpoint and scenario has a usable logit dump on both "
        "sides.";
  } else if (out.deviate > 0) {
    out.headline = "DEVIATES: " + std::to_string(out.deviate) + " of " +
                   std::to_string(out.conform + out.deviate) + " compared pairs exceed " +
                   threshold + ".";
  } else {
    out.headline = "CONFORMS: " + std::to_string(out.conform) + " compared pair" +
                   (out.conform == 1 ? "" : "s") + " within " + threshold + ".";
  }
  if (out.not_compared > 0) {
    out.headline += " " + std::to_string(out.not_compared) + " not compared.";
  }
  return out;
}

std::string FormatConformance(const RunConformance& c) {
  std::ostringstream out;
  out << "A: " << c.label_a << "\nB: " << c.label_b << "\n" << c.headline << "\n";
  for (const PairConformance& p : c.pairs) {
    out << "\n" << PairVerdictName(p) << "  " << p.checkpoint << " / " << p.scenario;
    if (!p.config_a.empty() || !p.config_b.empty())
      out << "  (" << p.config_a << " vs " << p.config_b << ")";
    out << "\n";
    if (!p.compared) {
      out << "  " << p.reason << "\n";
      continue;
    }
    const ConformanceSummary& s = p.summary;
    out << "  " << PairVerdictLine(p) << "\n";
    out << "  " << DescribeCoverage(p) << "\n";
    out << "  NMSE max " << Short(s.max_nmse) << " mean " << Short(s.mean_nmse) << "; KLD mean "
        << Short(s.kld_mean) << " p99 " << Short(s.kld_p99) << " max " << Short(s.kld_max)
        << "; top-1 " << s.top1_agreements << "/" << s.steps << "; top-5 overlap "
        << Short(s.top_overlap_mean) << "; max |a - b| " << Short(s.max_abs_diff) << "; ulp p50 "
        << harness::FormatUlp(s.ulp.p50) << " p99 " << harness::FormatUlp(s.ulp.p99) << " max "
        << harness::FormatUlp(s.ulp.max) << "\n";
    // llama-perplexity --kl-divergence's figures, each mean ± its standard error.
    out << "  mean KLD " << Short(s.kld_mean) << " ± " << Short(s.kld_mean_se) << " (median "
        << Short(s.kld_median) << ", p99.9 " << Short(s.kld_p999) << "); mean Δp "
        << Short(100 * s.delta_p_mean.value) << " ± " << Short(100 * s.delta_p_mean.se)
        << " %; RMS Δp " << Short(100 * s.delta_p_rms.value) << " ± "
        << Short(100 * s.delta_p_rms.se) << " %; same top-1 " << Short(s.top1_percent.value)
        << " ± " << Short(s.top1_percent.se) << " %\n";
    for (const std::string& note : p.notes) out << "  note: " << note << "\n";
  }
  return out.str();
}

}  // namespace samebits::harness
