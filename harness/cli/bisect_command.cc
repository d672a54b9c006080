// `samebits bisect`: finds the commit that changed the numbers. Each commit
// git proposes is built once in a worktree of its own (cached by its tree),
// the selection is run with that build's engine and judged as the gate
// judges it; at the culprit the selection runs again with traces on the
// culprit and its parent to name the first diverging step, layer and op.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "harness/analysis/compare.h"
#include "harness/analysis/judge.h"
#include "harness/analysis/references.h"
#include "harness/analysis/verdict.h"
#include "harness/cli/commands.h"
#include "harness/cli/matrix_flags.h"
#include "harness/cli/path_flags.h"
#include "harness/runner/bisect.h"
#include "harness/runner/git.h"
#include "harness/runner/machine.h"
#include "harness/runner/matrix_run.h"
#include "harness/runner/revision_build.h"
#include "harness/runner/selection.h"
#include "harness/store/bisect_records.h"

namespace samebits::cli {
namespace {

namespace fs = std::filesystem;
using runner::BisectVerdict;

struct BisectFlags {
  MatrixFlags matrix;
  std::string good, bad = "HEAD";
  std::string build;  // empty: the project's cmake build
  std::string engine = "build/bin/samebits-engine";
  std::string repo;       // empty: the repository of the current folder
  std::string cache_dir;  // empty: <folder of the database>/builds
  bool every_cell = false;
  bool quiet = false;
};

using CellKey = std::tuple<std::string, std::string, std::string>;  // checkpoint, scenario, config

CellKey KeyOf(const harness::CellResult& c) {
  return {c.checkpoint, c.scenario, c.config.name};
}
CellKey KeyOf(const runner::Cell& c) {
  return {c.checkpoint, c.scenario, c.config.name};
}

std::string Short(const std::string& commit) {
  return commit.substr(0, 12);
}

// Returns the cells to run at every commit: the selection, narrowed (unless
// --every-cell) to the cells that diverged in the newest stored run with
// divergences. Throws UsageError when nothing is left.
std::vector<runner::Cell> BisectSelection(const BisectFlags& flags, store::Store& store,
                                          std::string* origin) {
  std::vector<runner::Cell> candidates;
  for (runner::Cell& c : runner::SelectCells(RunOptionsFor(flags.matrix).selection)) {
    if (c.supported) candidates.push_back(std::move(c));
  }
  if (flags.every_cell) {
    *origin = "every selected cell (--every-cell)";
    return candidates;
  }
  const int64_t run_id = store::LatestDivergingRun(store);
  if (run_id == 0) {
    *origin = "every selected cell (the store holds no run with a difference to narrow it to)";
    return candidates;
  }
  const harness::RunResult run = store.LoadRun(run_id);
  std::set<std::string> cell_configs;
  for (const harness::CellResult& c : run.cells) cell_configs.insert(c.config.name);
  std::set<CellKey> diverged;
  for (const harness::Divergence& d : run.diagnosis.divergences) {
    // config_b may name a reference file rather than a configuration.
    for (const std::string& config : {d.config_a, d.config_b}) {
      if (cell_configs.count(config) != 0) diverged.insert({d.checkpoint, d.scenario, config});
    }
  }
  std::vector<runner::Cell> chosen;
  for (runner::Cell& c : candidates) {
    if (diverged.count(KeyOf(c)) != 0) chosen.push_back(std::move(c));
  }
  if (chosen.empty()) {
    throw UsageError("none of the cells that diverged in run " + std::to_string(run_id) +
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
std::string DefaultGood(const BisectFlags& flags, const std::vector<runner::Cell>& cells,
                        store::Store& store, std::string* origin) {
  const std::string arch = runner::LocalMachine().arch;
  std::set<std::string> keys;
  for (const runner::Cell& c : cells) keys.insert(harness::ReferenceGroupKey(c.config.math, arch));
  const std::string dir = ReferencesDir(flags.matrix);
  for (const std::string& key : keys) {
    std::optional<harness::ReferenceGroup> group;
    try {
      group = harness::LoadReferenceGroup(dir, key);
    } catch (const harness::ReferenceError& e) {
      throw UsageError(e.what());
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
  throw UsageError("no good revision: the references in " + DisplayPath(dir) +
                   " record none and no stored run agreed; pass --good REV");
}

// One commit's judgement: its verdict, the run it made (stored) and why.
struct Judgement {
  BisectVerdict verdict = BisectVerdict::kSkip;
  int64_t run_id = 0;
  std::string note;
  harness::RunResult run;
};

class Bisector {
 public:
  Bisector(const BisectFlags& flags, store::Store& store, std::vector<runner::Cell> cells)
      : flags_(flags), store_(store), cells_(std::move(cells)) {
    build_.repo = flags.repo;
    build_.build_command = flags.build;
    build_.engine = flags.engine;
    build_.cache_dir = flags.cache_dir;
  }

  void set_bisect_id(int64_t id) { bisect_id_ = id; }
  void set_baseline(const harness::RunResult& run) {
    for (const harness::CellResult& c : run.cells) baseline_[KeyOf(c)] = c.steps;
  }
  int builds() const { return builds_; }

  // Builds and runs `commit` (with traces on `traced` instead of the
  // selection when `trace`), stores the run as a step of the bisect with
  // `role`, and returns the verdict.
  Judgement Judge(const std::string& commit, const std::string& role, bool trace = false,
                  const std::vector<runner::Cell>& traced = {}) {
    Judgement j;
    const runner::RevisionBuild build = runner::BuildRevision(commit, build_);
    if (!build.cached) ++builds_;
    store::BisectStepRecord step{commit, build.tree, role, "", 0, ""};
    if (!build.built) {
      j.note = "does not build: " + build.message;
    } else {
      MatrixFlags matrix = flags_.matrix;
      matrix.engine = build.engine;
      matrix.dump_logits = false;
      if (trace) matrix.timeout_seconds *= 4;  // traces are slower
      j.run = runner::RunMatrix(RunOptionsFor(matrix), trace ? traced : cells_, trace,
                                /*quiet=*/true);
      harness::Judge(j.run, JudgeOptionsFor(j.run, matrix));
      j.run_id = store_.SaveRun(j.run);
      step.run_id = j.run_id;
      std::tie(j.verdict, j.note) = Verdict(j.run);
    }
    step.verdict = trace ? "" : runner::BisectVerdictName(j.verdict);
    step.note = j.note;
    store::AddBisectStep(store_, bisect_id_, step);
    return j;
  }

  // Returns up to `most` cells of the selection that differ in `bad_run`
  // (from another configuration, the references or the good revision), in
  // selection order: the ones worth tracing at the culprit.
  std::vector<runner::Cell> DifferingCells(const harness::RunResult& bad_run, size_t most) const {
    std::set<CellKey> differing;
    for (const harness::CellResult& c : bad_run.cells) {
      auto it = baseline_.find(KeyOf(c));
      const bool moved =
          it != baseline_.end() && harness::FirstStepDifference(it->second, c.steps).has_value();
      if (c.code == harness::ResultCode::kFail || moved) differing.insert(KeyOf(c));
    }
    std::vector<runner::Cell> out;
    for (const runner::Cell& c : cells_) {
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

  const BisectFlags& flags_;
  store::Store& store_;
  std::vector<runner::Cell> cells_;
  runner::RevisionBuildOptions build_;
  std::map<CellKey, std::vector<harness::StepRecord>> baseline_;
  int64_t bisect_id_ = 0;
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

int BisectMain(BisectFlags flags) {
  const auto start = std::chrono::steady_clock::now();
  flags.repo =
      runner::RepositoryRoot(flags.repo.empty() ? fs::current_path().string() : flags.repo);
  std::unique_ptr<store::Store> store = OpenStore(flags.matrix.db);
  if (flags.cache_dir.empty()) {
    const std::string db = flags.matrix.db.empty() ? GetPaths().db : flags.matrix.db;
    flags.cache_dir = (fs::absolute(db).parent_path() / "builds").string();
  }
  if (fs::path(flags.engine).is_absolute()) {
    throw UsageError(
        "--engine must be relative to the worktree (such as build/bin/samebits-engine)");
  }
  std::string selection_origin, good_origin = "--good";
  const std::vector<runner::Cell> cells = BisectSelection(flags, *store, &selection_origin);
  if (cells.empty()) throw UsageError("the selection holds no cell this machine can run");
  if (flags.good.empty()) flags.good = DefaultGood(flags, cells, *store, &good_origin);
  std::string good, bad;
  try {
    good = runner::ResolveCommit(flags.repo, flags.good);
    bad = runner::ResolveCommit(flags.repo, flags.bad);
  } catch (const std::runtime_error& e) {
    throw UsageError(std::string(e.what()) + " (good from " + good_origin + ")");
  }
  std::printf("bisecting %s (good, from %s) .. %s (bad) in %s\n", Short(good).c_str(),
              good_origin.c_str(), Short(bad).c_str(), flags.repo.c_str());
  std::printf("selection: %s\n", selection_origin.c_str());
  std::fflush(stdout);

  const int64_t bisect_id = store::StartBisect(
      *store, {runner::NowUtc(), flags.repo, good, bad, CommandLine(), "running"});
  Bisector bisector(flags, *store, cells);
  bisector.set_bisect_id(bisect_id);
  auto fail = [&](const std::string& why) {
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    store::FinishBisect(*store, bisect_id, "failed", "", why, ms);
    throw UsageError(why);
  };

  const Judgement good_end = bisector.Judge(good, "good-end");
  if (good_end.verdict != BisectVerdict::kGood) {
    fail("the good revision " + Short(good) + " is not good (" +
         runner::BisectVerdictName(good_end.verdict) + ": " + good_end.note + ")");
  }
  bisector.set_baseline(good_end.run);
  const Judgement bad_end = bisector.Judge(bad, "bad-end");
  if (bad_end.verdict != BisectVerdict::kBad) {
    fail("the bad revision " + Short(bad) + " is not bad (" +
         runner::BisectVerdictName(bad_end.verdict) + ": " + bad_end.note + "); nothing to bisect");
  }

  int step_number = 0;
  const std::string session =
      (fs::path(flags.cache_dir) / ("bisect-" + std::to_string(bisect_id))).string();
  runner::BisectOutcome outcome;
  try {
    outcome = runner::Bisect(flags.repo, good, bad, session, [&](const std::string& commit) {
      const auto t0 = std::chrono::steady_clock::now();
      const Judgement j = bisector.Judge(commit, "step");
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!flags.quiet) {
        std::printf("step %d: %s %s: %s (%.1f s)%s%s\n", ++step_number, Short(commit).c_str(),
                    runner::Git(flags.repo, {"log", "-1", "--format=%s", commit}).c_str(),
                    runner::BisectVerdictName(j.verdict), s, j.note.empty() ? "" : ": ",
                    j.note.c_str());
        std::fflush(stdout);
      }
      return j.verdict;
    });
  } catch (const std::runtime_error& e) {
    fail(e.what());
  }
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (outcome.culprit.empty()) {
    std::string list;
    for (const std::string& c : outcome.candidates) {
      list += "\n  " + Short(c) + " " + runner::Git(flags.repo, {"log", "-1", "--format=%s", c});
    }
    std::printf(
        "The first bad commit hides among commits that could not be judged; it is one "
        "of:%s\n",
        list.c_str());
    store::FinishBisect(*store, bisect_id, "ambiguous", "", "could be any of:" + list,
                        elapsed_s * 1000);
    return 1;
  }

  // At the culprit: traces on it and its parent name the first diverging op.
  const std::string& culprit = outcome.culprit;
  const std::string parent = runner::Git(flags.repo, {"rev-parse", culprit + "^"});
  // Four differing cells are enough to name the op, and traces are slow.
  const std::vector<runner::Cell> traced = bisector.DifferingCells(bad_end.run, 4);
  const Judgement traced_parent = bisector.Judge(parent, "parent-trace", /*trace=*/true, traced);
  const Judgement traced_culprit = bisector.Judge(culprit, "culprit-trace", /*trace=*/true, traced);
  std::vector<std::string> where;
  if (traced_parent.run_id != 0 && traced_culprit.run_id != 0) {
    where = FirstDivergences(traced_parent.run, traced_culprit.run);
  }
  const std::string subject = runner::Git(flags.repo, {"log", "-1", "--format=%s", culprit});
  const std::string files =
      runner::Git(flags.repo, {"diff-tree", "--no-commit-id", "--name-only", "-r", culprit});
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ostringstream report;
  report << "The first bad commit: " << culprit << " " << subject << "\n";
  report << "  changed files:";
  std::istringstream file_lines(files);
  for (std::string f; std::getline(file_lines, f);) report << " " << f;
  report << "\n";
  for (const std::string& w : where) report << "  " << w << "\n";
  if (where.empty())
    report << "  (the traced reruns of the culprit and its parent did not differ)\n";
  report << "  " << outcome.steps.size() << " bisect steps, " << bisector.builds() << " builds, "
         << static_cast<int>(total_s + 0.5) << " s; stored as bisect " << bisect_id << "\n";
  std::printf("%s", report.str().c_str());
  store::FinishBisect(*store, bisect_id, "found", culprit, report.str(), total_s * 1000);
  return 0;
}

CommandSpec Setup(CLI::App& app) {
  auto flags = std::make_shared<BisectFlags>();
  CLI::App* sub = app.add_subcommand(
      "bisect",
      "Finds the commit that changed the numbers: builds each revision git bisect proposes "
      "(once, cached by its tree), runs the selection and judges it as the gate does.");
  AddMatrixFlags(sub, &flags->matrix);
  // Here the engine is a path inside each revision's worktree.
  sub->remove_option(sub->get_option("--engine"));
  Declare(
      sub->add_option("--engine", flags->engine,
                      "The engine program each revision's build leaves, relative to its worktree "
                      "(default build/bin/samebits-engine); any program that speaks "
                      "engine/protocol/PROTOCOL.md will do.")
          ->type_name("PATH"),
      PathRole::kInput);
  sub->add_option("--good", flags->good,
                  "A revision whose outputs agree. Default: the `revision` line of the references "
                  "the selection is judged against, else the newest stored run that agreed.")
      ->type_name("REV");
  sub->add_option("--bad", flags->bad, "A revision whose outputs differ (default HEAD).")
      ->type_name("REV");
  sub->add_option("--build", flags->build,
                  "Builds a revision: this shell command runs in its worktree (default: the "
                  "project's CMake build of samebits-engine, with ccache as the compiler "
                  "launcher when present). A command that fails means `skip`.")
      ->type_name("CMD");
  Declare(
      sub->add_option("--repo", flags->repo,
                      "Bisects the repository holding this folder (default: the current folder's).")
          ->type_name("DIR"),
      PathRole::kInput);
  Declare(
      sub->add_option("--cache-dir", flags->cache_dir,
                      "Keeps one worktree and build per source tree here (default: builds/ next to "
                      "the database); a tree built once is never built again.")
          ->type_name("DIR"),
      PathRole::kOutputFolder);
  sub->add_flag("--every-cell", flags->every_cell,
                "Runs every selected cell at each step instead of only those that diverged in "
                "the newest stored run with a difference.");
  sub->add_flag("-q,--quiet", flags->quiet, "Prints no line per step, only the result.");
  sub->footer(
      "Each step maps the outcome for git: the selection agrees with the references (and with\n"
      "the good revision's outputs) -> good; it differs -> bad; the revision does not build,\n"
      "or a child crashed, hung or was refused -> skip. At the culprit up to four of the\n"
      "cells that differ run again with traces on the culprit and its parent, to name the\n"
      "first diverging step, position, layer and op. Every step's run is stored, tagged\n"
      "with the bisect.\n\n"
      "The worktrees are the repository's own (`git worktree list` shows them); delete the\n"
      "cache folder and run `git worktree prune` to reclaim the space.\n\n"
      "Exit codes:\n"
      "  0  the first bad commit was found\n"
      "  1  it hides among commits that could not be judged (they are listed)\n"
      "  2  the bisect could not be carried out: bad arguments, a good revision that is not\n"
      "     good, a bad one that is not bad, no repository\n\n"
      "Examples:\n"
      "  samebits gate || samebits bisect            # after a failing gate\n"
      "  samebits bisect --good v0.1 --checkpoint synthetic:tiny --config reference,cpu-t2\n"
      "  samebits bisect --build 'make engine' --engine out/engine --good abc123");
  return {sub, [flags] { return BisectMain(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(bisect, 25, Setup);

}  // namespace samebits::cli
