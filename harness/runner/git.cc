// Git as a child process (git.h).
#include "harness/runner/git.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "harness/runner/child.h"

namespace samebits::runner {
namespace {

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string Describe(const std::vector<std::string>& args) {
  std::string line = "git";
  for (const std::string& a : args) line += " " + a;
  return line;
}

}  // namespace

std::string FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

GitResult RunGit(const std::string& dir, const std::vector<std::string>& args) {
  static const std::string git = FindProgram("git");
  if (git.empty()) throw std::runtime_error("git is not installed (no `git` on PATH)");
  ChildSpec spec;
  spec.program = git;
  spec.args = {"-C", dir};
  spec.args.insert(spec.args.end(), args.begin(), args.end());
  // HOME and PATH reach git (its configuration, its helpers); nothing that
  // would change which repository it works on (GIT_DIR) is passed.
  spec.env = ChildEnvironment({});
  spec.timeout_seconds = 0;
  spec.stderr_tail_lines = 40;
  const ChildOutcome outcome = RunChild(spec);
  if (!outcome.started) throw std::runtime_error(outcome.start_error);
  GitResult result;
  result.exit_code = outcome.signal != 0 ? 128 + outcome.signal : outcome.exit_code;
  result.out = outcome.stdout_text;
  result.err = outcome.stderr_tail;
  return result;
}

std::string Git(const std::string& dir, const std::vector<std::string>& args) {
  const GitResult r = RunGit(dir, args);
  if (r.exit_code != 0) {
    throw std::runtime_error(Describe(args) + " (in " + dir + ") failed: " + Trim(r.err));
  }
  return Trim(r.out);
}

std::string ResolveCommit(const std::string& dir, const std::string& rev) {
  const GitResult r = RunGit(dir, {"rev-parse", "--verify", "--quiet", rev + "^{commit}"});
  if (r.exit_code != 0 || Trim(r.out).empty()) {
    throw std::runtime_error("no such revision '" + rev + "' in the repository at " + dir);
  }
  return Trim(r.out);
}

std::string TreeOf(const std::string& dir, const std::string& commit) {
  return Git(dir, {"rev-parse", commit + "^{tree}"});
}

std::string RepositoryRoot(const std::string& dir) {
  const GitResult r = RunGit(dir, {"rev-parse", "--show-toplevel"});
  if (r.exit_code != 0) throw std::runtime_error(dir + " is not inside a git repository");
  return Trim(r.out);
}

}  // namespace samebits::runner
