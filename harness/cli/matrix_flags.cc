// The shared matrix flags (matrix_flags.h).
#include "harness/cli/matrix_flags.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "harness/analysis/judge.h"
#include "harness/cli/bisect_advice.h"
#include "harness/cli/checkpoint_flags.h"
#include "harness/cli/commands.h"
#include "harness/cli/engine_choice.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/path_flags.h"
#include "harness/runner/engine_profile.h"
#include "harness/runner/machine.h"
#include "harness/runner/matrix_flag_names.h"

namespace samebits::cli {

namespace {

// The engine the flags run (for `bisect`, the current build's, which each
// revision's engine is expected to match in what it knows), asked with its
// profile's probe; a program given by path declares none and is not asked.
std::vector<runner::EngineToAsk> CheckpointEnginesOf(const MatrixFlags& flags) {
  const runner::MatrixRunOptions options = RunOptionsFor(flags);
  const runner::Selection& s = options.selection;
  return {{options.engine, s.profile ? s.profile->probe : options.probe}};
}

}  // namespace

void AddMatrixFlags(CLI::App* sub, MatrixFlags* flags) {
  Declare(sub->add_option("--engine", flags->engine,
                          "Drives another engine: a profile's name (engines/NAME.json: its own "
                          "configurations, baseline, known differences and references/NAME/), or a "
                          "program's path, run as samebits-engine is (any program that speaks "
                          "engine/protocol/PROTOCOL.md with samebits-engine's flags).")
              ->type_name("NAME|PATH"),
          PathRole::kInput);
  Declare(sub->add_option("--engine-profile", flags->engine_profile,
                          "Drives the engine this profile describes (any file; see --engine). Its "
                          "references are read from and written to the folder references/ beside "
                          "the file (references/NAME/ there), unless --references-dir names "
                          "another.")
              ->type_name("FILE")
              ->check(CLI::ExistingFile),
          PathRole::kInput);
  AddBuildFlag(sub, &flags->build);
  DeclareCheckpoints(
      Declare(sub->add_option(
                     "--checkpoint", flags->checkpoints,
                     "Runs these checkpoints (comma-separated specs such as synthetic:tiny or a "
                     "file path) instead of the engine profile's matrix.checkpoints (for "
                     "samebits-engine: engines/samebits.json). A file that is not there, or a "
                     "synthetic checkpoint the engine says it does not know, is refused before "
                     "anything runs.")
                  ->type_name("SPEC,...")
                  ->delimiter(','),
              PathRole::kInput),
      [flags] { return CheckpointEnginesOf(*flags); });
  Declare(sub->add_option("--scenario", flags->scenarios,
                          "Runs these scenarios (names from the scenarios folder, or paths to JSON "
                          "files) instead of every scenario in the folder.")
              ->type_name("NAME,...")
              ->delimiter(','),
          PathRole::kInput);
  Declare(sub->add_option(
                 "--suite", flags->suite,
                 "Runs the pairs of checkpoints and scenarios this suite file lists (such as "
                 "scenarios/real/suite.json) instead of the synthetic matrix; --checkpoint and "
                 "--scenario then narrow the suite. Without any selection flag the synthetic "
                 "matrix and scenarios/real/suite.json both run.")
              ->type_name("FILE"),
          PathRole::kInput);
  Declare(sub->add_option("--scenarios-dir", flags->scenarios_dir,
                          "Takes scenarios from this folder instead of the project's scenarios/.")
              ->type_name("DIR"),
          PathRole::kInput);
  sub->add_option("--config", flags->configs,
                  "Runs only these configurations (comma-separated names such as reference, "
                  "cpu-t2, cpu-t3-chunk8k, cpu-avx2; `samebits run --list` shows them), each "
                  "with its twins under the other --math and --quant-dot profiles given; any "
                  "name engines/samebits.json's grammar reads runs, whatever --threads says "
                  "(cpu-t4, cpu-t2-chunk16k). Any cpu "
                  "configuration may be batched by adding -bN[-staggered][-seedS] before its "
                  "profile suffix: cpu-t2-b4 decodes the scenario beside 3 companion sequences, "
                  "cpu-t3-b8-staggered beside 7 that join and leave at different steps "
                  "(harness/README.md, Configurations).")
      ->type_name("NAME,...")
      ->delimiter(',');
  sub->add_option(runner::kThreadsFlag, flags->threads,
                  "Makes one cpu-tN configuration per thread count given (default 1,2,3); the "
                  "small-chunk configuration uses the largest.")
      ->type_name("N,...")
      ->delimiter(',')
      ->check(WholeNumberInRange(1, kMaxCount));
  sub->add_option(runner::kMathFlag, flags->math,
                  "Runs every configuration under each of these math profiles (portable, libm); "
                  "default portable. Profiles are compared only within themselves.")
      ->type_name("PROFILE,...")
      ->delimiter(',');
  sub->add_option(runner::kQuantDotFlag, flags->quant_dot,
                  "Runs every configuration under each of these dot-product profiles for "
                  "quantized weights (exact, int8), under each math profile; default exact. int8 "
                  "rounds activations to int8 per block (names end in -int8: cpu-t2-int8, "
                  "cpu-t2-libm-int8) and has references of its own (portable-int8.txt); "
                  "profiles are compared only within themselves.")
      ->type_name("PROFILE,...")
      ->delimiter(',');
  sub->add_option("-j,--jobs", flags->jobs,
                  "Runs up to N children at once (default: the number of cores).")
      ->type_name("N")
      ->check(WholeNumberInRange(1, kMaxCount));
  sub->add_option("--cells-per-child", flags->cells_per_child,
                  "Lets up to N cells of one configuration share a child, when the engine says "
                  "it serves several (samebits-engine's `run --serve`); each cell is still "
                  "checked and judged on its own, and a fault in one is kept to it. 1 starts a "
                  "child per cell (default " +
                      std::to_string(kDefaultCellsPerChild) + ").")
      ->type_name("N")
      ->check(WholeNumberInRange(1, kMaxCount));
  sub->add_option("--timeout", flags->timeout_seconds,
                  "Kills a child (and its process group) that runs longer than this; it counts "
                  "as TIMEOUT (default 120).")
      ->type_name("SECONDS")
      ->check(SecondsInRange(kMaxTimeoutSeconds));
  Declare(AddStoreOption(sub, flags->db, "Stores runs in"), PathRole::kWriteStore);
  Declare(sub->add_option("--references-dir", flags->references_dir,
                          "Reads references from this folder instead of the project's references/.")
              ->type_name("DIR"),
          PathRole::kInput);
}

void AddDumpFlag(CLI::App* sub, MatrixFlags* flags) {
  sub->add_flag("--dump-logits", flags->dump_logits,
                "Asks every child for its raw logits (float32, one row per step) and keeps them "
                "in .samebits/dumps/run-<time>-<pid>/ next to the database, one file per cell "
                "(<checkpoint>.<scenario>.<configuration>.f32); reports then give ULP distances "
                "and whether the argmax changed where outputs differ.");
}

void AddMachineNameFlag(CLI::App* sub, MatrixFlags* flags) {
  sub->add_option("--machine-name", flags->machine_name,
                  "Names the machine the run is stored under (letters, digits, '.', '_' and '-'; "
                  "default: this host's name), for `samebits runs --machine` and `samebits "
                  "compare machine:NAME`. CI runners whose hostnames change every job give "
                  "their runner type here.")
      ->type_name("NAME")
      ->check(ValidMachineName());
}

void RequireExistingReferencesDir(CLI::App* sub) {
  sub->get_option("--references-dir")->check(ExistingFolder());
}

namespace {

// Sets the engine `options` run and the profile its cells come from:
// another engine's (its matrix, names and known differences) or
// samebits-engine's (the default matrix, expanded with --threads, --math
// and --quant-dot).
void ChooseEngine(const MatrixFlags& flags, runner::MatrixRunOptions& options) {
  const Paths& paths = GetPaths();
  options.engine_given = !flags.engine.empty();
  options.engine = options.engine_given ? flags.engine : paths.engine;
  auto chosen = ChosenProfile(flags.engine, flags.engine_profile);
  BuildIfAsked(flags.build, chosen.get());
  if (chosen) {
    try {
      options.engine = runner::ResolveProgram(*chosen);
    } catch (const runner::ProfileError& e) {
      throw UsageError(e.what());
    }
    options.engine_given = true;
  }
  runner::Selection& s = options.selection;
  if (chosen && !IsOwnEngine(*chosen)) {
    s.profile = std::move(chosen);
  } else {
    // samebits-engine, by its profile or as the default engine, and a
    // program given by path (run as samebits-engine is): the matrix is
    // samebits-engine's profile's.
    const bool program_by_path = options.engine_given && !chosen;
    s.own_profile = chosen ? std::move(chosen) : OwnEngineProfile();
    // The probe of what the engine can never run here (unavailable.h) is
    // its profile's. A program given by path declares nothing, so nothing
    // is asked of it (a wrapper, a build under test): it is not started
    // before the store is checked, it serves no cells, and each of its
    // cells answers for itself (`unsupported` for an ISA it lacks).
    if (!program_by_path) options.probe = s.own_profile->probe;
  }
}

}  // namespace

runner::MatrixRunOptions RunOptionsFor(const MatrixFlags& flags) {
  const Paths& paths = GetPaths();
  runner::MatrixRunOptions options;
  runner::Selection& s = options.selection;
  s.checkpoints = flags.checkpoints;
  s.scenarios = flags.scenarios;
  s.suite = flags.suite;
  s.scenarios_dir = flags.scenarios_dir;
  s.configs = flags.configs;
  s.threads = flags.threads;
  s.math = flags.math;
  s.quant_dot = flags.quant_dot;
  s.root = paths.root;
  s.project_scenarios = paths.scenarios;
  ChooseEngine(flags, options);
  options.jobs = flags.jobs > 0
                     ? flags.jobs
                     : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.timeout_seconds = flags.timeout_seconds;
  options.cells_per_child = flags.cells_per_child;
  options.dump_logits = flags.dump_logits;
  options.dump_parent = StoreSideFolder(flags.db);
  options.command_line = CommandLine();
  options.machine_name =
      flags.machine_name.empty() ? runner::LocalMachineName() : flags.machine_name;
  return options;
}

std::string ReferencesDir(const MatrixFlags& flags) {
  if (!flags.references_dir.empty()) return flags.references_dir;
  // A profile given as a file keeps its references beside it, as the
  // project's engines/NAME.json keep theirs in the project's references/.
  if (!flags.engine_profile.empty()) {
    const std::filesystem::path folder = std::filesystem::path(flags.engine_profile).parent_path();
    return ((folder.empty() ? std::filesystem::path(".") : folder) / "references").string();
  }
  return GetPaths().references;
}

std::vector<harness::ScenarioEquivalence> DeclaredEquivalences(const MatrixFlags& flags) {
  const runner::MatrixRunOptions options = RunOptionsFor(flags);
  const runner::Selection& s = options.selection;
  // The suite in use (or the default one, which the default gate runs) and
  // the scenarios folder's equivalences.json; names that match no cell of
  // the run check nothing.
  const std::string folder = s.scenarios_dir.empty() ? s.project_scenarios : s.scenarios_dir;
  std::vector<std::string> files = {
      s.suite.empty() ? runner::DefaultSuitePath(s) : s.suite,
      (std::filesystem::path(folder) / harness::kEquivalencesFileName).string()};
  std::vector<harness::ScenarioEquivalence> out;
  for (const std::string& file : files) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) continue;
    try {
      for (harness::ScenarioEquivalence& e : harness::LoadEquivalences(file)) out.push_back(e);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  return out;
}

harness::JudgeOptions JudgeOptionsFor(const harness::RunResult& run, const MatrixFlags& flags) {
  const std::string dir = ReferencesDir(flags);
  harness::JudgeOptions options = harness::LoadJudgeOptions(run, dir);
  options.references_dir = DisplayPath(dir);
  options.samebits = GetPaths().program_display;
  options.bisect_command = BisectCommandFor(flags);
  options.equivalences = DeclaredEquivalences(flags);
  return options;
}

}  // namespace samebits::cli
