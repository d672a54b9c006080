// The bisection loop of `samebits bisect`: git chooses the commits (`git
// bisect --no-checkout`, in a worktree of its own, so the user's checkout and
// any bisect of theirs are untouched), a callback judges each one, and the
// loop maps the verdicts onto git's good / bad / skip.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace samebits::runner {

// What one commit's outputs say. kSkip is for a commit that says nothing:
// it does not build, or its run could not be made (git bisect run's 125).
enum class BisectVerdict { kGood, kBad, kSkip };
const char* BisectVerdictName(BisectVerdict verdict);  // "good", "bad", "skip"

struct BisectStep {
  std::string commit;
  BisectVerdict verdict = BisectVerdict::kSkip;
};

struct BisectOutcome {
  std::vector<BisectStep> steps;  // in the order git asked
  // The first bad commit, when git could name it.
  std::string culprit;
  // When skipped commits hide it: every commit that could be the first bad
  // one (git's "could be any of").
  std::vector<std::string> candidates;
};

// Bisects the commits between `good` (judged good) and `bad` (judged bad)
// of the repository at `repo`, asking `judge` about each commit git picks.
// `session_dir` (must not exist) holds the bisect's own worktree while it
// runs; it is removed afterwards. Throws std::runtime_error when git refuses
// (for instance when `good` is not an ancestor of `bad`).
BisectOutcome Bisect(const std::string& repo, const std::string& good, const std::string& bad,
                     const std::string& session_dir,
                     const std::function<BisectVerdict(const std::string& commit)>& judge);

}  // namespace samebits::runner
