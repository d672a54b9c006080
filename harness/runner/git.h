// Git, run as a child process (never through a shell): what `samebits
// bisect` and `samebits bench` need to name revisions, make worktrees and
// drive `git bisect`.
#pragma once

#include <string>
#include <vector>

namespace samebits::runner {

// What one git command did.
struct GitResult {
  int exit_code = 0;
  std::string out;  // stdout
  std::string err;  // the tail of stderr
};

// Returns what `git -C <dir> <args...>` did; never throws for git's own
// failure (a non-zero exit), only when git cannot be started at all.
GitResult RunGit(const std::string& dir, const std::vector<std::string>& args);

// Returns the trimmed stdout of `git -C <dir> <args...>`. Throws
// std::runtime_error naming the command and git's message when git fails.
std::string Git(const std::string& dir, const std::vector<std::string>& args);

// Returns the full commit id `rev` names in the repository at `dir`.
// Throws std::runtime_error ("no such revision") when it names none.
std::string ResolveCommit(const std::string& dir, const std::string& rev);

// Returns the id of `commit`'s tree: two commits with the same tree have the
// same sources, so one build serves both.
std::string TreeOf(const std::string& dir, const std::string& commit);

// Returns the top folder of the repository holding `dir`. Throws
// std::runtime_error when `dir` is in no repository.
std::string RepositoryRoot(const std::string& dir);

// Returns the absolute path of `name` found on PATH ("" when absent); a
// name holding '/' is returned as is.
std::string FindProgram(const std::string& name);

}  // namespace samebits::runner
