// The bisection loop (bisect.h).
#include "harness/runner/bisect.h"

#include <filesystem>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "harness/runner/child.h"
#include "harness/runner/git.h"

namespace samebits::runner {
namespace {

namespace fs = std::filesystem;

// Removes the session worktree however the bisect ends, an interrupt
// (SIGINT, SIGTERM: child.h's deferred interrupts) included.
class SessionWorktree {
 public:
  SessionWorktree(std::string repo, std::string dir)
      : repo_(std::move(repo)), dir_(std::move(dir)) {}
  ~SessionWorktree() {
    const InterruptCleanup cleanup;  // its git commands run even when interrupted
    try {
      RunGit(dir_, {"bisect", "reset"});
      RunGit(repo_, {"worktree", "remove", "--force", dir_});
      std::error_code ec;
      fs::remove_all(dir_, ec);
      RunGit(repo_, {"worktree", "prune"});
    } catch (...) {
    }
  }
  SessionWorktree(const SessionWorktree&) = delete;
  SessionWorktree& operator=(const SessionWorktree&) = delete;

 private:
  std::string repo_, dir_;
};

// Reads what git said after a verdict: the first bad commit, the
// candidates among skipped commits, or nothing (bisecting goes on).
bool Concluded(const GitResult& said, BisectOutcome* outcome) {
  static const std::regex kFirstBad("^([0-9a-f]{40}) is the first bad commit");
  static const std::regex kCommitLine("^([0-9a-f]{40})\\s*$");
  std::istringstream lines(said.out);
  std::string line;
  bool any_of = false;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_search(line, m, kFirstBad)) {
      outcome->culprit = m[1];
      return true;
    }
    if (line.find("could be any of") != std::string::npos) any_of = true;
    if (any_of && std::regex_search(line, m, kCommitLine)) outcome->candidates.push_back(m[1]);
  }
  return any_of;
}

}  // namespace

const char* BisectVerdictName(BisectVerdict verdict) {
  switch (verdict) {
    case BisectVerdict::kGood:
      return "good";
    case BisectVerdict::kBad:
      return "bad";
    case BisectVerdict::kSkip:
      return "skip";
  }
  return "skip";
}

BisectOutcome Bisect(const std::string& repo, const std::string& good, const std::string& bad,
                     const std::string& session_dir,
                     const std::function<BisectVerdict(const std::string& commit)>& judge) {
  BisectOutcome outcome;
  std::error_code ec;
  if (fs::exists(session_dir, ec)) {
    throw std::runtime_error("the bisect session folder " + session_dir + " already exists");
  }
  fs::create_directories(fs::path(session_dir).parent_path(), ec);
  Git(repo, {"worktree", "add", "--detach", "--no-checkout", session_dir, bad});
  SessionWorktree session(repo, session_dir);
  GitResult said = RunGit(session_dir, {"bisect", "start", "--no-checkout", bad, good});
  if (said.exit_code != 0) {
    throw std::runtime_error("git bisect start " + bad + " " + good + " failed: " + said.err +
                             said.out);
  }
  // Every verdict narrows the range, so the loop ends; the bound only
  // guards against a git that keeps proposing the same commit.
  for (int guard = 0; guard < 100000; ++guard) {
    if (Concluded(said, &outcome)) return outcome;
    const std::string commit = Git(session_dir, {"rev-parse", "BISECT_HEAD"});
    const BisectVerdict verdict = judge(commit);
    // A verdict reached while interrupted judged killed children: unwind.
    ThrowIfInterrupted();
    outcome.steps.push_back({commit, verdict});
    said = RunGit(session_dir, {"bisect", BisectVerdictName(verdict), commit});
    // git exits 2 with "could be any of" when only skipped commits remain.
    if (said.exit_code != 0 && said.out.find("could be any of") == std::string::npos) {
      throw std::runtime_error(std::string("git bisect ") + BisectVerdictName(verdict) + " " +
                               commit + " failed: " + said.err + said.out);
    }
  }
  throw std::runtime_error("git bisect did not conclude");
}

}  // namespace samebits::runner
