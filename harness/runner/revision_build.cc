// Cached builds of revisions in worktrees (revision_build.h).
#include "harness/runner/revision_build.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "harness/runner/child.h"
#include "harness/runner/git.h"

extern char** environ;

namespace samebits::runner {
namespace {

namespace fs = std::filesystem;

// Returns the cached outcome's lines ("command ...", "result ...") or empty.
std::pair<std::string, std::string> ReadStatus(const fs::path& file) {
  std::ifstream in(file);
  std::string line, command, result;
  while (std::getline(in, line)) {
    if (line.rfind("command ", 0) == 0) command = line.substr(8);
    if (line.rfind("result ", 0) == 0) result = line.substr(7);
  }
  return {command, result};
}

// Makes (or remakes) a detached worktree of `commit` at `dir`.
void MakeWorktree(const std::string& repo, const fs::path& dir, const std::string& commit) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    RunGit(repo, {"worktree", "remove", "--force", dir.string()});
    fs::remove_all(dir, ec);
  }
  RunGit(repo, {"worktree", "prune"});
  Git(repo, {"worktree", "add", "--detach", "--force", dir.string(), commit});
}

}  // namespace

std::map<std::string, std::string> BuildEnvironment(const std::string& worktree) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  // ccache hashes absolute paths unless told the base folder: with it, a
  // second worktree of nearly the same sources hits the cache.
  if (!worktree.empty() && env.count("CCACHE_BASEDIR") == 0) env["CCACHE_BASEDIR"] = worktree;
  return env;
}

std::string DefaultBuildCommand() {
  // Every revision is built in a worktree of its own (cache/<tree>); ccache
  // keys on the compiler's arguments, which name the worktree's absolute
  // paths, so without CCACHE_BASEDIR (which makes them relative) a revision
  // that changed one file would miss the cache for every file.
  const std::string launcher =
      FindProgram("ccache").empty()
          ? ""
          : " -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache";
  const std::string basedir = launcher.empty() ? "" : "export CCACHE_BASEDIR=\"$PWD\" && ";
  const unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  return basedir + "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release" + launcher +
         " >/dev/null && cmake --build build -j" + std::to_string(jobs) +
         " --target samebits-engine";
}

RevisionBuild BuildRevision(const std::string& rev, const RevisionBuildOptions& options) {
  RevisionBuild build;
  build.commit = ResolveCommit(options.repo, rev);
  build.tree = TreeOf(options.repo, build.commit);
  const std::string command =
      options.build_command.empty() ? DefaultBuildCommand() : options.build_command;
  const fs::path cache = fs::absolute(options.cache_dir);
  std::error_code ec;
  fs::create_directories(cache, ec);
  if (ec) throw std::runtime_error("cannot create the build cache " + cache.string());
  const fs::path dir = cache / build.tree;
  const fs::path status = cache / (build.tree + ".build");
  build.worktree = dir.string();
  build.engine = (dir / options.engine).lexically_normal().string();
  build.log_path = (cache / (build.tree + ".log")).string();

  const auto [cached_command, cached_result] = ReadStatus(status);
  if (cached_command == command && fs::is_directory(dir, ec)) {
    build.cached = true;
    build.built = cached_result == "ok" && ::access(build.engine.c_str(), X_OK) == 0;
    if (cached_result == "ok" && !build.built) {
      build.cached = false;  // the engine was removed since: build again below
    } else {
      if (!build.built) build.message = "did not build (cached; see " + build.log_path + ")";
      return build;
    }
  }
  fs::remove(status, ec);
  if (!fs::is_directory(dir / ".git", ec) && !fs::is_regular_file(dir / ".git", ec)) {
    MakeWorktree(options.repo, dir, build.commit);
  }

  ChildSpec spec;
  spec.program = "/bin/sh";
  // The command runs in the worktree; "$1" keeps odd folder names whole.
  spec.args = {"-c", "cd \"$1\" && eval \"$2\"", "sh", dir.string(), command};
  spec.env = BuildEnvironment(dir.string());
  spec.timeout_seconds = options.timeout_seconds;
  spec.stderr_tail_lines = 60;
  const auto start = std::chrono::steady_clock::now();
  const ChildOutcome outcome = RunChild(spec);
  build.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  {
    std::ofstream log(build.log_path, std::ios::trunc);
    log << "$ " << command << "\n" << outcome.stdout_text << outcome.stderr_tail;
  }
  if (!outcome.started) {
    build.message = outcome.start_error;
  } else if (outcome.timed_out) {
    build.message = "the build ran past its timeout";
  } else if (outcome.signal != 0 || outcome.exit_code != 0) {
    build.message = "the build command failed (exit " +
                    std::to_string(outcome.signal != 0 ? 128 + outcome.signal : outcome.exit_code) +
                    "; see " + build.log_path + ")";
  } else if (::access(build.engine.c_str(), X_OK) != 0) {
    build.message = "the build left no engine program at " + build.engine;
  } else {
    build.built = true;
  }
  // Only what the sources decide is remembered: a build that finished, well
  // or with a nonzero status of its own. One that could not start, ran past
  // its timeout or was killed by a signal (an interrupted bisect or bench,
  // the OOM killer; the shell reports a killed command as 128 + N) says
  // nothing about the revision, and is built again next time.
  const bool killed = outcome.signal != 0 || outcome.exit_code > 128;
  if (outcome.started && !outcome.timed_out && !killed) {
    std::ofstream out(status, std::ios::trunc);
    out << "command " << command << "\nresult " << (build.built ? "ok" : "failed") << "\n";
  }
  return build;
}

}  // namespace samebits::runner
