// `samebits bisect` as a run (bisect_run.h).
#include "harness/runner/bisect_run.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "harness/analysis/compare.h"
#include "harness/analysis/numeric_profile.h"
#include "harness/analysis/references.h"
#include "harness/analysis/verdict.h"
#include "harness/runner/bisect.h"
#include "harness/runner/child.h"
#include "harness/runner/display_path.h"
#include "harness/runner/git.h"
#include "harness/runner/machine.h"
#include "harness/runner/run_error.h"
#include "harness/runner/selection.h"
#include "harness/runner/unavailable.h"
#include "harness/store/bisect_records.h"

namespace samebits::runner {
namespace {

namespace fs = std::filesystem;

using CellKey = std::tuple<std::string, std::string, std::string>;  // checkpoint, scenario, config

CellKey KeyOf(const harness::CellResult& c) {
  return {c.checkpoint, c.scenario, c.config.name};
}
CellKey KeyOf(const Cell& c) {
  return {c.checkpoint, c.scenario, c.config.name};
}

std::string Short(const std::string& commit) {
  return commit.substr(0, 12);
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Returns the cells that diverged in `run` (both sides of each divergence
// that name one of its configurations; config_b may name a reference file).
std::set<CellKey> DivergedCells(const harness::RunResult& run) {
  std::set<std::string> cell_configs;
  for (const harness::CellResult& c : run.cells) cell_configs.insert(c.config.name);
  std::set<CellKey> diverged;
  for (const harness::Divergence& d : run.diagnosis.divergences) {
    for (const std::string& config : {d.config_a, d.config_b}) {
      if (cell_configs.count(config) != 0) diverged.insert({d.checkpoint, d.scenario, config});
    }
  }
  return diverged;
}

// Returns the cells to run at every commit: the selection, narrowed (unless
// `every_cell`) to the cells that diverged in the newest stored run with
// divergences, and in `*origin` where they came from.
std::vector<Cell> BisectSelection(const BisectOptions& options, store::Store& store,
                                  std::string* origin) {
  // What this machine can run is asked of the engine the options name (the
  // current build's); each revision's child still answers for itself.
  std::vector<std::string> left_out;
  std::vector<Cell> candidates;
  for (Cell& c : SelectRunnableCells(options.run, &left_out)) {
    if (c.supported) candidates.push_back(std::move(c));
  }
  const std::string left_out_text = [&] {
    std::string text;
    for (const std::string& note : left_out) text += "; " + note;
    return text;
  }();
  if (options.every_cell) {
    *origin = "every selected cell (--every-cell)" + left_out_text;
    return candidates;
  }
  const int64_t run_id = store::LatestDivergingRun(store);
  if (run_id == 0) {
    *origin = "every selected cell (the store holds no run with a difference to narrow it to)" +
              left_out_text;
    return candidates;
  }
  const harness::RunResult run = store.LoadRun(run_id);
  const std::set<CellKey> diverged = DivergedCells(run);
  std::vector<Cell> chosen;
  for (Cell& c : candidates) {
    if (diverged.count(KeyOf(c)) != 0) chosen.push_back(std::move(c));
  }
  if (chosen.empty()) {
    throw RunError("none of the cells that diverged in run " + std::to_string(run_id) +
                   " is in the selection; pass the selection flags that run used (its command: " +
                   run.command + "), or --every-cell");
  }
  *origin = "the " + std::to_string(chosen.size()) +
            (chosen.size() == 1 ? " cell that" : " cells that") + " diverged in run " +
            std::to_string(run_id);
  return chosen;
}

// Returns the default good revision: the references' `revision` line for
// the selection's groups, else the newest stored run that agreed.
std::string DefaultGood(const BisectOptions& options, const std::vector<Cell>& cells,
                        store::Store& store, std::string* origin) {
  const std::string arch = LocalMachine().arch;
  std::set<std::string> keys;
  for (const Cell& c : cells) {
    keys.insert(harness::ReferenceGroupKey(harness::ProfileOf(c.config), arch));
  }
  const std::string& dir = options.references_dir;
  for (const std::string& key : keys) {
    std::optional<harness::ReferenceGroup> group;
    try {
      group = harness::LoadReferenceGroup(dir, key);
    } catch (const harness::ReferenceError& e) {
      throw RunError(e.what());
    }
    if (group && !group->revision.empty()) {
      *origin = "the revision line of " + DisplayPath(dir + "/" + harness::ReferenceFileName(key));
      return group->revision.substr(0, group->revision.find("-dirty"));
    }
  }
  if (auto revision = store::LatestAgreeingRevision(store)) {
    *origin = "the newest stored run that agreed";
    return *revision;
  }
  throw RunError("no good revision: the references in " + DisplayPath(dir) +
                 " record none and no stored run agreed; pass --good REV");
}

// One commit's judgement: its verdict, the run it made (stored) and why.
struct Judgement {
  BisectVerdict verdict = BisectVerdict::kSkip;
  int64_t run_id = 0;
  std::string note;
  harness::RunResult run;
  // Where the step's time went: building the revision (0 when cached),
  // running the selection, judging and storing the run; -1: not done.
  double build_seconds = -1, run_seconds = -1, judge_seconds = -1;
};

// Builds, runs and judges revisions, each one a step of the bisect in the
// store; after the good end, judges each run against its outputs too.
class Bisector {
 public:
  Bisector(const BisectOptions& options, store::Store& store, std::vector<Cell> cells,
           int64_t bisect_id)
      : options_(options), store_(store), cells_(std::move(cells)), bisect_id_(bisect_id) {}

  void set_baseline(const harness::RunResult& run) {
    for (const harness::CellResult& c : run.cells) baseline_[KeyOf(c)] = c.steps;
  }
  int builds() const { return builds_; }

  // Builds and runs `commit` (with traces on `traced` instead of the
  // selection when `trace`), stores the run as a step of the bisect with
  // `role`, and returns the verdict.
  Judgement Judge(const std::string& commit, const std::string& role, bool trace = false,
                  const std::vector<Cell>& traced = {}) {
    Judgement j;
    auto phase_start = std::chrono::steady_clock::now();
    const RevisionBuild build = BuildRevision(commit, options_.build);
    // An interrupt killed the build or the cells: nothing of it is stored.
    ThrowIfInterrupted();
    j.build_seconds = build.cached ? 0.0 : SecondsSince(phase_start);
    if (!build.cached) ++builds_;
    store::BisectStepRecord step{commit, build.tree, role, "", 0, ""};
    if (!build.built) {
      j.note = "does not build: " + build.message;
    } else {
      MatrixRunOptions run = options_.run;
      run.engine = build.engine;
      run.engine_given = true;
      run.dump_logits = false;
      if (trace) run.timeout_seconds *= 4;  // traces are slower
      phase_start = std::chrono::steady_clock::now();
      j.run = RunMatrix(run, trace ? traced : cells_, trace, /*quiet=*/true);
      ThrowIfInterrupted();
      j.run_seconds = SecondsSince(phase_start);
      phase_start = std::chrono::steady_clock::now();
      harness::Judge(j.run, options_.judge_options(j.run, run));
      j.run_id = store_.SaveRun(j.run);
      step.run_id = j.run_id;
      std::tie(j.verdict, j.note) = Verdict(j.run);
      j.judge_seconds = SecondsSince(phase_start);
    }
    step.verdict = trace ? "" : BisectVerdictName(j.verdict);
    step.note = j.note;
    const auto ms = [](double seconds) { return seconds < 0 ? -1.0 : seconds * 1000; };
    step.build_ms = ms(j.build_seconds);
    step.run_ms = ms(j.run_seconds);
    step.judge_ms = ms(j.judge_seconds);
    store::AddBisectStep(store_, bisect_id_, step);
    return j;
  }

  // Returns up to `most` cells of the selection that differ in `bad_run`
  // (from another configuration, the references or the good revision), in
  // selection order: the ones worth tracing at the culprit.
  std::vector<Cell> DifferingCells(const harness::RunResult& bad_run, size_t most) const {
    std::set<CellKey> differing;
    for (const harness::CellResult& c : bad_run.cells) {
      auto it = baseline_.find(KeyOf(c));
      const bool moved =
          it != baseline_.end() && harness::FirstStepDifference(it->second, c.steps).has_value();
      if (c.code == harness::ResultCode::kFail || moved) differing.insert(KeyOf(c));
    }
    std::vector<Cell> out;
    for (const Cell& c : cells_) {
      if (out.size() < most && differing.count(KeyOf(c)) != 0) out.push_back(c);
    }
    return out;
  }

 private:
  // Returns how the run maps onto git: a difference is bad; a run that
  // could not be made (a child that crashed, hung or was refused, or
  // nothing checked) says nothing, so skip; otherwise good.
  std::pair<BisectVerdict, std::string> Verdict(const harness::RunResult& run) const {
    for (const harness::CellResult& c : run.cells) {
      if (c.code == harness::ResultCode::kUnresolved || c.code == harness::ResultCode::kTimeout) {
        return {BisectVerdict::kSkip, std::string(harness::ResultCodeName(c.code)) + " " +
                                          c.config.name + ": " + c.message};
      }
    }
    for (const harness::CellResult& c : run.cells) {
      if (c.code == harness::ResultCode::kFail) {
        return {BisectVerdict::kBad,
                c.checkpoint + " " + c.scenario + " " + c.config.name + " " + c.message};
      }
    }
    for (const harness::CellResult& c : run.cells) {
      auto it = baseline_.find(KeyOf(c));
      if (it == baseline_.end()) continue;
      if (auto d = harness::FirstStepDifference(it->second, c.steps)) {
        return {BisectVerdict::kBad, c.checkpoint + " " + c.scenario + " " + c.config.name +
                                         " differs from the good revision at step " +
                                         std::to_string(d->index) + ": " + d->detail};
      }
    }
    if (harness::CountPassing(run) == 0) return {BisectVerdict::kSkip, "no cell ran"};
    return {BisectVerdict::kGood, "agrees"};
  }

  const BisectOptions& options_;
  store::Store& store_;
  std::vector<Cell> cells_;
  int64_t bisect_id_ = 0;
  std::map<CellKey, std::vector<harness::StepRecord>> baseline_;
  int builds_ = 0;
};

// Returns where the culprit's outputs first differ from its parent's, cell
// by cell, in words (step, position, layer and op), for the report.
std::vector<std::string> FirstDivergences(const harness::RunResult& parent,
                                          const harness::RunResult& culprit) {
  std::vector<std::string> out;
  std::map<CellKey, const harness::CellResult*> before;
  for (const harness::CellResult& c : parent.cells) before[KeyOf(c)] = &c;
  for (const harness::CellResult& c : culprit.cells) {
    auto it = before.find(KeyOf(c));
    if (it == before.end()) continue;
    const auto step = harness::FirstStepDifference(it->second->steps, c.steps);
    if (!step) continue;
    std::ostringstream line;
    line << c.checkpoint << " " << c.scenario << " " << c.config.name << ": first differs at step "
         << step->index << " (" << step->kind << ", position " << step->position
         << "): " << step->detail;
    if (auto t = harness::FirstTraceDifference(it->second->traces, c.traces)) {
      line << "; first diverging trace: position " << t->position << ", layer " << t->layer
           << ", op " << t->op;
    } else if (c.traces.empty()) {
      line << "; the engine wrote no traces";
    }
    out.push_back(line.str());
  }
  return out;
}

// One bisect from its ends to its report: the steps of RunBisect, sharing
// the store, the bisect's id and its clock.
class BisectSession {
 public:
  BisectSession(const BisectOptions& options, store::Store& store)
      : options_(options), store_(store), repo_(options.build.repo) {}

  BisectReport Run() {
    try {
      return RunSteps();
    } catch (...) {
      // Interrupted (child.h's deferred interrupts): whatever the signal
      // broke on its way, the record says interrupted, not running or failed.
      const int sig = InterruptSignal();
      if (sig == 0) throw;
      if (bisect_id_ != 0) {
        store::FinishBisect(store_, bisect_id_, "interrupted", "", Interrupted(sig).what(),
                            SecondsSince(start_) * 1000);
      }
      throw Interrupted(sig);
    }
  }

 private:
  BisectReport RunSteps() {
    std::string selection_origin;
    const std::vector<Cell> cells = BisectSelection(options_, store_, &selection_origin);
    if (cells.empty()) throw RunError("the selection holds no cell this machine can run");
    ResolveEnds(cells, selection_origin);
    bisect_id_ = store::StartBisect(
        store_, {NowUtc(), repo_, good_, bad_, options_.command_line, "running"});
    bisector_.emplace(options_, store_, cells, bisect_id_);
    const harness::RunResult bad_run = JudgeEnds();
    const BisectOutcome outcome = BisectBetweenEnds();
    if (outcome.culprit.empty()) return Ambiguous(outcome);
    return Found(outcome, bad_run);
  }

  // Resolves --good (its default when empty) and --bad to commits and says
  // what is bisected and over which cells.
  void ResolveEnds(const std::vector<Cell>& cells, const std::string& selection_origin) {
    std::string good_rev = options_.good, good_origin = "--good";
    if (good_rev.empty()) good_rev = DefaultGood(options_, cells, store_, &good_origin);
    try {
      good_ = ResolveCommit(repo_, good_rev);
      bad_ = ResolveCommit(repo_, options_.bad);
    } catch (const std::runtime_error& e) {
      throw RunError(std::string(e.what()) + " (good from " + good_origin + ")");
    }
    options_.say("bisecting " + Short(good_) + " (good, from " + good_origin + ") .. " +
                 Short(bad_) + " (bad) in " + repo_);
    options_.say("selection: " + selection_origin);
  }

  // Judges both ends, refusing a good end that is not good or a bad end
  // that is not bad. Returns the bad end's run; the good end's becomes the
  // baseline every later run is compared with.
  harness::RunResult JudgeEnds() {
    const Judgement good_end = bisector_->Judge(good_, "good-end");
    if (good_end.verdict != BisectVerdict::kGood) {
      Fail("the good revision " + Short(good_) + " is not good (" +
           BisectVerdictName(good_end.verdict) + ": " + good_end.note + ")");
    }
    bisector_->set_baseline(good_end.run);
    Judgement bad_end = bisector_->Judge(bad_, "bad-end");
    if (bad_end.verdict != BisectVerdict::kBad) {
      Fail("the bad revision " + Short(bad_) + " is not bad (" +
           BisectVerdictName(bad_end.verdict) + ": " + bad_end.note + "); nothing to bisect");
    }
    return std::move(bad_end.run);
  }

  // Lets git bisect between the ends, judging each commit it proposes.
  BisectOutcome BisectBetweenEnds() {
    int step_number = 0;
    const std::string session =
        (fs::path(options_.build.cache_dir) / ("bisect-" + std::to_string(bisect_id_))).string();
    try {
      return Bisect(repo_, good_, bad_, session, [&](const std::string& commit) {
        const auto t0 = std::chrono::steady_clock::now();
        const Judgement j = bisector_->Judge(commit, "step");
        const double s = SecondsSince(t0);
        if (!options_.quiet) SayStep(++step_number, commit, j, s);
        return j.verdict;
      });
    } catch (const std::runtime_error& e) {
      Fail(e.what());
    }
  }

  void SayStep(int number, const std::string& commit, const Judgement& j, double seconds) {
    options_.say("step " + std::to_string(number) + ": " + Short(commit) + " " +
                 Git(repo_, {"log", "-1", "--format=%s", commit}) + ": " +
                 BisectVerdictName(j.verdict) + " (" + StepTimes(j, seconds) + ")" +
                 (j.note.empty() ? "" : ": ") + j.note);
  }

  // "12.3 s: build 9.8 s, run 2.1 s, verdict 0.4 s" (a cached build says
  // so; a revision that did not build has no run).
  static std::string StepTimes(const Judgement& j, double seconds) {
    const auto s = [](double x) {
      char text[32];
      std::snprintf(text, sizeof text, "%.1f s", x);
      return std::string(text);
    };
    std::string out =
        s(seconds) + ": build " + (j.build_seconds == 0 ? "cached" : s(j.build_seconds));
    if (j.run_seconds >= 0) out += ", run " + s(j.run_seconds);
    if (j.judge_seconds >= 0) out += ", verdict " + s(j.judge_seconds);
    return out;
  }

  // The culprit hides among commits that could not be judged: lists them.
  BisectReport Ambiguous(const BisectOutcome& outcome) {
    std::string list;
    for (const std::string& c : outcome.candidates) {
      list += "\n  " + Short(c) + " " + Git(repo_, {"log", "-1", "--format=%s", c});
    }
    store::FinishBisect(store_, bisect_id_, "ambiguous", "", "could be any of:" + list,
                        SecondsSince(start_) * 1000);
    return {false,
            "The first bad commit hides among commits that could not be judged; it is one "
            "of:" +
                list + "\n"};
  }

  // At the culprit: traces on it and its parent name the first diverging
  // op; the report names the commit, its files and where it differs.
  BisectReport Found(const BisectOutcome& outcome, const harness::RunResult& bad_run) {
    const std::string& culprit = outcome.culprit;
    const std::string parent = Git(repo_, {"rev-parse", culprit + "^"});
    // Four differing cells are enough to name the op, and traces are slow.
    const std::vector<Cell> traced = bisector_->DifferingCells(bad_run, 4);
    const Judgement traced_parent = bisector_->Judge(parent, "parent-trace", true, traced);
    const Judgement traced_culprit = bisector_->Judge(culprit, "culprit-trace", true, traced);
    std::vector<std::string> where;
    if (traced_parent.run_id != 0 && traced_culprit.run_id != 0) {
      where = FirstDivergences(traced_parent.run, traced_culprit.run);
    }
    const double total_s = SecondsSince(start_);
    const std::string text = FoundText(outcome, where, total_s);
    store::FinishBisect(store_, bisect_id_, "found", culprit, text, total_s * 1000);
    return {true, text};
  }

  std::string FoundText(const BisectOutcome& outcome, const std::vector<std::string>& where,
                        double total_s) const {
    const std::string& culprit = outcome.culprit;
    std::ostringstream report;
    report << "The first bad commit: " << culprit << " "
           << Git(repo_, {"log", "-1", "--format=%s", culprit}) << "\n";
    report << "  changed files:";
    std::istringstream files(
        Git(repo_, {"diff-tree", "--no-commit-id", "--name-only", "-r", culprit}));
    for (std::string f; std::getline(files, f);) report << " " << f;
    report << "\n";
    for (const std::string& w : where) report << "  " << w << "\n";
    if (where.empty()) {
      report << "  (the traced reruns of the culprit and its parent did not differ)\n";
    }
    report << "  " << outcome.steps.size() << " bisect steps, " << bisector_->builds()
           << " builds, " << std::lround(total_s) << " s; stored as bisect " << bisect_id_ << "\n";
    return report.str();
  }

  // Records the bisect as failed and throws `why` (exit 2).
  [[noreturn]] void Fail(const std::string& why) {
    store::FinishBisect(store_, bisect_id_, "failed", "", why, SecondsSince(start_) * 1000);
    throw RunError(why);
  }

  const BisectOptions& options_;
  store::Store& store_;
  const std::string repo_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::string good_, bad_;
  int64_t bisect_id_ = 0;
  std::optional<Bisector> bisector_;
};

}  // namespace

BisectReport RunBisect(const BisectOptions& options, store::Store& store) {
  return BisectSession(options, store).Run();
}

}  // namespace samebits::runner
