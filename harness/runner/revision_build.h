// Builds a git revision of an engine in a worktree of its own, once: the
// build is cached under the revision's tree id (`git rev-parse REV^{tree}`),
// so a revision built once — or any other commit with the same sources — is
// never built again, and a revision that failed to build is not retried
// with the same command. `samebits bisect` and `samebits bench` use it.
//
// Layout under the cache folder:
//   <tree>/            a detached `git worktree` of the first commit with that tree
//   <tree>.build       "command <build command>" and "result ok|failed" lines
//   <tree>.log         the build's output (the tail of stderr, all of stdout)
#pragma once

#include <map>
#include <string>

namespace samebits::runner {

struct RevisionBuildOptions {
  std::string repo;       // a folder inside the repository
  std::string cache_dir;  // where the worktrees live (created)
  // Run by /bin/sh inside the worktree. Empty: DefaultBuildCommand().
  std::string build_command;
  std::string engine = "build/bin/samebits-engine";  // relative to the worktree
  double timeout_seconds = 3600;                     // per build; <= 0: none
};

struct RevisionBuild {
  std::string commit, tree;
  std::string worktree;  // absolute
  std::string engine;    // absolute; the engine program when `built`
  bool built = false;    // the build command succeeded and left the engine
  bool cached = false;   // the outcome came from an earlier build
  double seconds = 0;    // the build's wall time (0 when cached)
  std::string message;   // why it did not build, for a person
  std::string log_path;  // the build's output
};

// Returns the project's own build: configure with CMake (Release; ccache as
// the compiler launcher when ccache is on PATH) and build the engine.
std::string DefaultBuildCommand();

// Returns the whole environment of this process, for a build: it needs
// what the user's shell gives it (compilers, ccache settings), unlike an
// engine child, whose environment is kept minimal so nothing changes a
// result. CCACHE_BASEDIR is `folder` (when not empty) unless already set
// (ccache hashes absolute paths unless told the base folder: with it, a
// second worktree of nearly the same sources hits the cache).
std::map<std::string, std::string> BuildEnvironment(const std::string& folder);

// Returns the revision's build, building it on first use. Never throws for
// a build that fails (that is a result: `built` false with a message);
// throws std::runtime_error when the revision does not exist or the
// worktree cannot be made.
RevisionBuild BuildRevision(const std::string& rev, const RevisionBuildOptions& options);

}  // namespace samebits::runner
