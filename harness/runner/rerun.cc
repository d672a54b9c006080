// The gate's rerun policy (rerun.h).
#include "harness/runner/rerun.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>

#include "harness/analysis/terminal_text.h"
#include "harness/runner/cell_runner.h"
#include "harness/store/dump_paths.h"

namespace samebits::runner {
namespace {

// Returns whether two step sequences are the same outputs (every index and
// hash), so a rerun's dump or trace stands for the stored cell.
bool SameSteps(const std::vector<harness::StepRecord>& a,
               const std::vector<harness::StepRecord>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].index != b[i].index || a[i].xxh3_64 != b[i].xxh3_64 || a[i].fnv1a64 != b[i].fnv1a64)
      return false;
  }
  return true;
}

bool BothPass(const harness::CellResult (&rerun)[2]) {
  return rerun[0].code == harness::ResultCode::kPass && rerun[1].code == harness::ResultCode::kPass;
}

// One diverging pair to rerun: its two stored cells, and what to ask for.
struct RerunPair {
  harness::CellResult* cells[2] = {nullptr, nullptr};
  bool dump = false;
};

// Returns the pair's two cells in `run`, or nulls when one side is a
// reference file rather than a cell.
RerunPair FindPair(harness::RunResult& run, const harness::Divergence& d) {
  RerunPair pair;
  for (harness::CellResult& c : run.cells) {
    if (c.checkpoint != d.checkpoint || c.scenario != d.scenario) continue;
    if (c.config.name == d.config_a) pair.cells[0] = &c;
    if (c.config.name == d.config_b) pair.cells[1] = &c;
  }
  if (pair.cells[0] != nullptr && pair.cells[1] != nullptr) {
    pair.dump = pair.cells[0]->dump_path.empty() || pair.cells[1]->dump_path.empty();
  }
  return pair;
}

// Keeps the rerun's dumps for cells whose outputs it reproduced.
void AdoptDumps(const RerunPair& pair, const harness::CellResult (&rerun)[2],
                const std::string& root) {
  for (int k = 0; k < 2; ++k) {
    harness::CellResult& cell = *pair.cells[k];
    if (rerun[k].dump_path.empty()) {
      std::fprintf(stderr, "  the engine wrote no whole logit dump for %s\n",
                   cell.config.name.c_str());
    } else if (SameSteps(rerun[k].steps, cell.steps)) {
      cell.dump_path = store::StoredDumpPath(rerun[k].dump_path, root);
    } else {
      std::fprintf(stderr,
                   "  the rerun of %s printed other outputs than the run (the engine differs "
                   "from run to run); its logit dump is not used\n",
                   cell.config.name.c_str());
    }
  }
}

// Reruns one pair; returns false (having said why) when a rerun failed.
bool RerunPairOnce(const RerunPair& pair, RunnerOptions options,
                   const MatrixRunOptions& run_options, const std::vector<Cell>& selected,
                   bool trace, harness::CellResult (&rerun)[2]) {
  if (!pair.dump) options.dump_dir.clear();
  auto run_both = [&] {
    for (int k = 0; k < 2; ++k) {
      rerun[k] = RunCell(CellForResult(*pair.cells[k], run_options.selection, selected), options);
    }
  };
  run_both();
  if (!BothPass(rerun) && trace && pair.dump) {
    // An engine that cannot dump must still name the diverging layer.
    std::fprintf(stderr, "  the rerun with logit dumps failed; tracing without them\n");
    options.dump_dir.clear();
    run_both();
  }
  if (!BothPass(rerun)) {
    std::fprintf(stderr, "  the rerun failed: %s%s\n",
                 harness::TerminalSafe(rerun[0].message).c_str(),
                 harness::TerminalSafe(rerun[1].message).c_str());
    return false;
  }
  return true;
}

}  // namespace

namespace {

// Returns the diagnosis's divergences that have a pair of cells to rerun
// (not a reference file), one per pair: first the first pair of each
// distinct (config_a, config_b), then the others, each in the diagnosis's
// order. So a small budget still covers every diverging configuration.
std::vector<const harness::Divergence*> RerunOrder(const harness::Diagnosis& diagnosis) {
  std::vector<const harness::Divergence*> first, rest;
  std::set<std::string> pairs, configs;
  for (const harness::Divergence& d : diagnosis.divergences) {
    if (!pairs.insert(harness::TraceKey(d.checkpoint, d.scenario, d.config_a, d.config_b)).second)
      continue;
    const bool new_config = configs.insert(d.config_a + '\t' + d.config_b).second;
    (new_config ? first : rest).push_back(&d);
  }
  first.insert(first.end(), rest.begin(), rest.end());
  return first;
}

}  // namespace

RerunOutcome RerunDivergences(harness::RunResult& run, const MatrixRunOptions& run_options,
                              const std::vector<Cell>& selected, bool trace, double budget_seconds,
                              bool quiet) {
  RerunOutcome out;
  RunnerOptions options;
  options.engine = EnginePath(run_options);
  options.profile = run_options.selection.profile.get();
  options.own_profile = run_options.selection.own_profile.get();
  options.timeout_seconds = run_options.timeout_seconds * (trace ? 4 : 1);  // traces are slower
  options.trace = trace;
  const auto start = std::chrono::steady_clock::now();
  for (const harness::Divergence* dp : RerunOrder(run.diagnosis)) {
    const harness::Divergence& d = *dp;
    const std::string key = harness::TraceKey(d.checkpoint, d.scenario, d.config_a, d.config_b);
    const RerunPair pair = FindPair(run, d);
    if (pair.cells[0] == nullptr || pair.cells[1] == nullptr) continue;  // a reference file
    if (!trace && !pair.dump) continue;
    const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start;
    // The first pair always runs, so a broken build's report always has
    // one pair's dumps (and traces) however small the budget.
    if (out.rerun > 0 && spent.count() >= budget_seconds) {
      out.skipped.push_back(d.checkpoint + " " + d.scenario + ": " + d.config_a + " and " +
                            d.config_b);
      continue;
    }
    ++out.rerun;
    if (pair.dump && options.dump_dir.empty()) {
      options.dump_dir = NewDumpDirectory(run_options.dump_parent);
    }
    if (!quiet) {
      std::fprintf(stderr, "rerunning %s %s: %s and %s (%s)\n", d.checkpoint.c_str(),
                   d.scenario.c_str(), d.config_a.c_str(), d.config_b.c_str(),
                   trace && pair.dump ? "traces, logit dumps"
                   : trace            ? "traces"
                                      : "logit dumps");
    }
    harness::CellResult rerun[2];
    if (!RerunPairOnce(pair, options, run_options, selected, trace, rerun)) continue;
    if (pair.dump) AdoptDumps(pair, rerun, run_options.selection.root);
    if (!trace) continue;
    for (int k = 0; k < 2; ++k) pair.cells[k]->traces = rerun[k].traces;
    if (auto diff = harness::FirstTraceDifference(rerun[0].traces, rerun[1].traces)) {
      out.trace_differences[key] = *diff;
    }
  }
  // A dump folder in which no rerun kept a dump does not outlive the gate.
  std::error_code ec;
  if (!options.dump_dir.empty()) std::filesystem::remove(options.dump_dir, ec);
  return out;
}

void JudgeWithReruns(harness::RunResult& run, harness::JudgeOptions judge,
                     const MatrixRunOptions& options, const std::vector<Cell>& selected, bool trace,
                     bool quiet, double budget_seconds) {
  harness::Judge(run, judge);
  // Configurations that disagree (in general, or only batched ones) are
  // rerun with traces and dumps; other findings have nothing to pair.
  if (run.diagnosis.kind != harness::Diagnosis::Kind::kIdentityBroken &&
      run.diagnosis.kind != harness::Diagnosis::Kind::kBatchVariance) {
    return;
  }
  RerunOutcome outcome = RerunDivergences(run, options, selected, trace, budget_seconds, quiet);
  if (trace) {
    judge.trace_differences = std::move(outcome.trace_differences);
    judge.traced = true;
    harness::Judge(run, judge);
  }
  if (outcome.skipped.empty()) return;
  char budget[32];
  std::snprintf(budget, sizeof budget, "%g", budget_seconds);
  std::string line = "Not rerun within the rerun budget of " + std::string(budget) + " s (" +
                     std::to_string(outcome.rerun) + " pairs were rerun; raise --rerun-budget " +
                     "for the rest): " + std::to_string(outcome.skipped.size()) + " pairs: ";
  constexpr size_t kNamed = 5;  // a roll-up, not a second divergence list
  for (size_t i = 0; i < outcome.skipped.size() && i < kNamed; ++i)
    line += (i ? "; " : "") + outcome.skipped[i];
  if (outcome.skipped.size() > kNamed)
    line += "; and " + std::to_string(outcome.skipped.size() - kNamed) + " more";
  run.diagnosis.details.push_back(line);
}

}  // namespace samebits::runner
