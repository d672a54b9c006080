// The flags `run`, `gate` and `reference generate` share: what to run
// (checkpoints, scenarios, configurations), how (engine, jobs, timeout) and
// where to store it; checked at parse time and turned into the runner's
// validated options (harness/runner/matrix_run.h).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "harness/analysis/judge.h"
#include "harness/analysis/references.h"
#include "harness/analysis/results.h"
#include "harness/runner/matrix_run.h"

namespace samebits::cli {

// How many cells of one configuration share a child by default, when the
// engine serves several (harness/runner/shared_child.h): enough that a
// child's start is paid rarely, few enough that two jobs stay balanced.
inline constexpr int kDefaultCellsPerChild = 32;

struct MatrixFlags {
  std::string engine;  // a program or a profile's name; empty: samebits-engine next to this program
  std::string engine_profile;  // a profile file (engine_choice.h)
  bool build = false;          // run the profile's build command first
  std::vector<std::string> checkpoints;
  std::vector<std::string> scenarios;  // names or paths
  std::string suite;                   // a suite file (harness/runner/suite.h)
  std::string scenarios_dir;
  std::vector<std::string> configs;
  std::vector<int> threads = {1, 2, 3};
  std::vector<std::string> math = {"portable"};
  std::vector<std::string> quant_dot = {"exact"};  // --quant-dot
  int jobs = 0;                                    // 0 (not given): the number of cores
  int cells_per_child = kDefaultCellsPerChild;
  double timeout_seconds = 120;
  std::string db;
  std::string references_dir;
  bool dump_logits = false;  // --dump-logits (run and gate only)
  std::string machine_name;  // --machine-name (run and gate only); empty: the hostname
};

// Adds the flags to `sub`, each with a value name and a full-sentence help.
void AddMatrixFlags(CLI::App* sub, MatrixFlags* flags);

// Adds --dump-logits (run and gate; `reference generate` has no use for it).
void AddDumpFlag(CLI::App* sub, MatrixFlags* flags);

// Adds --machine-name (run and gate: the runs a fleet selects by machine).
void AddMachineNameFlag(CLI::App* sub, MatrixFlags* flags);

// Makes `--references-dir` refuse, at parse time, a folder that does not
// exist (for commands that read references; `reference generate` creates it).
void RequireExistingReferencesDir(CLI::App* sub);

// Returns the validated options of a matrix run: the flags, with the
// defaults of this project filled in (engine, jobs, where dumps go).
runner::MatrixRunOptions RunOptionsFor(const MatrixFlags& flags);

// Returns the references folder the flags name: --references-dir; else,
// for a profile given as a file (--engine-profile FILE), references/ beside
// that file; else <root>/references (samebits-engine's, and those of the
// project's engines/NAME.json under references/NAME/).
std::string ReferencesDir(const MatrixFlags& flags);

// Returns the scenario equivalences the gate checks (equivalence.h): those
// of the suite in use (the default suite when none is given) and of the
// scenarios folder's equivalences.json. Throws UsageError for a malformed one.
std::vector<harness::ScenarioEquivalence> DeclaredEquivalences(const MatrixFlags& flags);

// Returns the options `run` and `gate` judge with: the references the run
// needs, loaded from the folder the flags name, and how to name that folder
// and the program in advice. Throws when a reference file is malformed.
harness::JudgeOptions JudgeOptionsFor(const harness::RunResult& run, const MatrixFlags& flags);

}  // namespace samebits::cli
