// `samebits bisect` as a run: the cells to run at every commit, the good and
// bad ends (each checked to be what it is said to be), every revision git
// proposes built once (revision_build.h) and its run judged as the gate
// judges it, and at the culprit a traced rerun of it and its parent that
// names the first diverging step, layer and op. Every step's run is stored,
// tagged with the bisect (store/bisect_records.h). The loop over git is
// bisect.h's.
#pragma once

#include <functional>
#include <string>

#include "harness/analysis/judge.h"
#include "harness/analysis/results.h"
#include "harness/runner/matrix_run.h"
#include "harness/runner/revision_build.h"
#include "harness/store/store.h"

namespace samebits::runner {

struct BisectOptions {
  // The selection and how to run it; each revision's build replaces the
  // engine, and dumps are off.
  MatrixRunOptions run;
  // The repository (its root), the build command, the engine's path inside
  // each worktree and the folder of cached builds.
  RevisionBuildOptions build;
  // Empty: the `revision` line of the references the selection is judged
  // against, else the newest stored run that agreed.
  std::string good;
  std::string bad = "HEAD";
  std::string references_dir;  // where `good`'s default is read
  // Runs every selected cell, not only those that diverged in the newest
  // stored run with a difference.
  bool every_cell = false;
  bool quiet = false;        // no line per step
  std::string command_line;  // stored with the bisect
  // Returns the options a revision's run is judged with (the gate's):
  // `ran_with` is how it ran (its engine and timeout).
  std::function<harness::JudgeOptions(const harness::RunResult& run,
                                      const MatrixRunOptions& ran_with)>
      judge_options;
  // Hears each line for the user as it happens (without its newline).
  std::function<void(const std::string& line)> say;
};

struct BisectReport {
  // False when the first bad commit hides among commits that could not be
  // judged (exit 1).
  bool found = false;
  std::string text;  // what to print, every line ended
};

// Bisects, storing the bisect and its steps in `store`. Throws RunError
// (exit 2) when it cannot be carried out: no cell to run, no good revision,
// a good revision that is not good, a bad one that is not bad, git refusing.
BisectReport RunBisect(const BisectOptions& options, store::Store& store);

}  // namespace samebits::runner
