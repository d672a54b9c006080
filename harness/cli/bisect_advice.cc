// The printed `samebits bisect` command (bisect_advice.h).
#include "harness/cli/bisect_advice.h"

#include <filesystem>
#include <sstream>

#include "harness/cli/commands.h"
#include "harness/runner/git.h"
#include "harness/runner/matrix_flag_names.h"
#include "harness/store/location.h"

namespace samebits::cli {
namespace {

namespace fs = std::filesystem;

template <typename T>
std::string Joined(const std::vector<T>& values) {
  std::ostringstream out;
  for (size_t i = 0; i < values.size(); ++i) out << (i > 0 ? "," : "") << values[i];
  return out.str();
}

// Returns the engine path relative to the repository holding the current
// folder, or "" when it lies outside (or there is no repository).
std::string EngineInRepository(const std::string& engine) {
  try {
    const fs::path root = fs::path(runner::RepositoryRoot(fs::current_path().string()));
    const fs::path relative =
        fs::weakly_canonical(fs::absolute(engine)).lexically_relative(fs::weakly_canonical(root));
    if (relative.empty() || *relative.begin() == "..") return "";
    return relative.string();
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace

std::string BisectCommandFor(const MatrixFlags& flags) {
  const MatrixFlags defaults;
  std::string line = GetPaths().program_display + " bisect";
  auto add = [&line](const std::string& flag, const std::string& value) {
    line += " " + flag + " " + ShellQuote(value);
  };
  if (!flags.engine.empty()) {
    const std::string relative = EngineInRepository(flags.engine);
    if (!relative.empty() && relative != "build/bin/samebits-engine") add("--engine", relative);
  }
  // A profile given as a file: bisect must run that engine, not samebits-engine.
  if (!flags.engine_profile.empty()) add("--engine-profile", flags.engine_profile);
  if (!flags.suite.empty()) add("--suite", flags.suite);
  if (!flags.scenarios_dir.empty()) add("--scenarios-dir", flags.scenarios_dir);
  if (!flags.checkpoints.empty()) add("--checkpoint", Joined(flags.checkpoints));
  if (!flags.scenarios.empty()) add("--scenario", Joined(flags.scenarios));
  if (!flags.configs.empty()) add("--config", Joined(flags.configs));
  if (flags.threads != defaults.threads) add(runner::kThreadsFlag, Joined(flags.threads));
  if (flags.math != defaults.math) add(runner::kMathFlag, Joined(flags.math));
  if (flags.quant_dot != defaults.quant_dot) add(runner::kQuantDotFlag, Joined(flags.quant_dot));
  if (flags.timeout_seconds != defaults.timeout_seconds) {
    std::ostringstream t;
    t << flags.timeout_seconds;
    add("--timeout", t.str());
  }
  if (!flags.references_dir.empty()) add("--references-dir", flags.references_dir);
  // Printed, so without its password (PGPASSFILE or PGPASSWORD carry one).
  if (!flags.db.empty()) add("--db", store::RedactLocation(flags.db));
  return line;
}

}  // namespace samebits::cli
