// The two sides of `samebits bench A B`, each named as the user named it: an
// engine program, a configuration of the default engine ("cpu-t2"), or a git
// revision, built once in a worktree of its own as `samebits bisect` builds
// it (revision_build.h).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "harness/analysis/bench_summary.h"
#include "harness/runner/engine_profile.h"
#include "harness/runner/revision_build.h"

namespace samebits::runner {

struct BenchSideOptions {
  std::string checkpoint = "synthetic:medium";
  // A scenario file, or a name looked up in `scenarios_dir`.
  std::string scenario = "classic";
  std::string scenarios_dir;
  // The configuration program and revision sides run; empty: cpu-t<cores>.
  std::string config;
  std::string engine;  // the engine configuration sides run
  // samebits-engine's profile: its grammar reads configuration names (any
  // it reads: cpu-t5, cpu-t2-chunk16k-libm), and it builds each side's argv.
  std::shared_ptr<const EngineProfile> own_profile;
  // How revision sides are built; `repo` is any folder inside the
  // repository (empty: the current folder).
  RevisionBuildOptions build;
  // Hears "building REV ..." before a revision is built.
  std::function<void(const std::string& line)> progress;
};

// Returns the side `spec` names: an executable file, a configuration of
// `options.engine`, or a revision (built now). Throws RunError (exit 2)
// naming the problem: no such scenario or configuration, no engine, a spec
// that is none of the three, a revision that does not build, an ISA this
// machine lacks.
harness::BenchSide ResolveBenchSide(const std::string& spec, const BenchSideOptions& options);

// Returns whether `spec` names a configuration of `options.engine` (as
// ResolveBenchSide reads it: not an executable file), which can be asked
// what it knows before the bench builds or runs anything.
bool NamesConfigurationSide(const std::string& spec, const BenchSideOptions& options);

}  // namespace samebits::runner
