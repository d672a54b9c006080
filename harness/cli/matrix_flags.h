// The flags `run`, `gate` and `reference generate` share: what to run
// (checkpoints, scenarios, configurations), how (engine, jobs, timeout) and
// where to store it; and running the selected matrix.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "harness/analysis/judge.h"
#include "harness/analysis/references.h"
#include "harness/analysis/results.h"
#include "harness/runner/matrix.h"

namespace samebits::cli {

struct MatrixFlags {
  std::string engine;  // empty: samebits-engine next to this program
  std::vector<std::string> checkpoints;
  std::vector<std::string> scenarios;  // names or paths
  std::string suite;                   // a suite file (harness/runner/suite.h)
  std::string scenarios_dir;
  std::vector<std::string> configs;
  std::vector<int> threads = {1, 2, 3};
  std::vector<std::string> math = {"portable"};
  int jobs = 0;  // 0: the number of cores
  double timeout_seconds = 120;
  std::string db;
  std::string references_dir;
  bool dump_logits = false;  // --dump-logits (run and gate only)
};

// Adds the flags to `sub`, each with a value name and a full-sentence help.
void AddMatrixFlags(CLI::App* sub, MatrixFlags* flags);

// Adds --dump-logits (run and gate; `reference generate` has no use for it).
void AddDumpFlag(CLI::App* sub, MatrixFlags* flags);

// Returns a new, empty folder for one run's raw logit dumps, next to the
// database: <folder of the database>/dumps/run-<UTC time>-<process id>
// (the run's id is not known until it is stored). Throws UsageError.
std::string NewDumpDirectory(const MatrixFlags& flags);

// Returns how a dump path is stored with its cell: relative to the project
// root when it lies below it (the project moves with its dumps), else
// absolute. Reports resolve relative paths against the root.
std::string StoredDumpPath(const std::string& path);

// Returns the suite run when no selection is given: scenarios/real/suite.json
// under the project root.
std::string DefaultSuitePath();

// Returns the cells the flags select: with --suite, the suite's pairs
// (narrowed by --checkpoint and --scenario); with no --checkpoint,
// --scenario, --scenarios-dir or --suite, the synthetic matrix and then the
// default suite; otherwise the matrix of the checkpoints and scenarios
// named, except that a --checkpoint the default suite lists selects its
// pairs in the suite (narrowed by --scenario). Throws UsageError (exit 2)
// for a selection that cannot be run.
std::vector<runner::Cell> SelectCells(const MatrixFlags& flags);

// Returns the engine path the flags name, checked to be an executable file.
// Throws UsageError.
std::string EnginePath(const MatrixFlags& flags);

// Runs the cells (with --trace when `trace`; with --dump-logits into a
// NewDumpDirectory when `flags.dump_logits`), showing progress on stderr.
// Returns the run: cells in matrix order, machine from the children's hello
// records, timings; not yet judged or stored.
harness::RunResult RunMatrix(const MatrixFlags& flags, const std::vector<runner::Cell>& cells,
                             bool trace, bool quiet);

// Throws UsageError (exit 2, nothing stored) when the engine refused every
// cell of some checkpoint before saying hello, with exit code 2 (bad
// arguments or input: a checkpoint it does not know, an unreadable file).
// Such a selection ran nothing, so it is not a failed check but a command
// that could not be carried out. Cells UNSUPPORTED on this machine are not
// counted.
void RefuseUnrunnableSelection(const harness::RunResult& run);

// Returns the references folder the flags name (default: <root>/references).
std::string ReferencesDir(const MatrixFlags& flags);

// Returns the options `run` and `gate` judge with: the references the run
// needs, loaded from the folder the flags name, and how to name that folder
// and the program in advice. Throws UsageError when a reference file is
// malformed.
harness::JudgeOptions JudgeOptionsFor(const harness::RunResult& run, const MatrixFlags& flags);

}  // namespace samebits::cli
