// Running a selection of cells as one run: the validated options the CLI
// produces (harness/cli/matrix_flags.h), the children in parallel with
// progress, and the refusal of a selection the engine would not run.
#pragma once

#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/runner/matrix.h"
#include "harness/runner/selection.h"
#include "harness/runner/temp_folder.h"

namespace samebits::runner {

// The options of `run`, `gate` and `reference generate`, validated: every
// number is in range (the CLI refuses the rest at parse time).
struct MatrixRunOptions {
  Selection selection;
  // The engine program; checked to be executable when a child is started
  // (EnginePath), so commands that start none do not need it.
  std::string engine;
  bool engine_given = false;  // false: the default, next to samebits
  // The argv of the engine's capabilities probe (its profile's `probe`;
  // unavailable.h); empty: the engine declares none.
  std::vector<std::string> probe;
  int jobs = 1;  // children at once, >= 1
  // Up to this many cells of one configuration share a child when the
  // engine's probe says it serves several (shared_child.h); 1: a child per
  // cell.
  int cells_per_child = 1;
  double timeout_seconds = 120;  // per child: finite, > 0
  // With `dump_logits`, every child writes its raw logits into a new
  // folder under <dump_parent>/dumps (the database's folder).
  bool dump_logits = false;
  std::string dump_parent;
  std::string command_line;  // stored with the run
  // The run's machine name (harness/analysis/machine_name.h; LocalMachineName
  // or --machine-name); empty: named after the machine's description.
  std::string machine_name;
};

// Returns the engine path, absolute, checked to be an executable file.
// Throws RunError naming what to do.
std::string EnginePath(const MatrixRunOptions& options);

// Returns a new, empty folder for one run's raw logit dumps:
// <parent>/dumps/run-<UTC time>-<process id> (the run's id is not known
// until it is stored). Throws RunError.
std::string NewDumpDirectory(const std::string& parent);

// A fresh folder under the system's temporary folder where one run's
// children cache the synthetic checkpoints they synthesise, removed with its
// files when the run ends; path() is "" when none could be made (the
// children then synthesise every time).
class SyntheticCache : public TempFolder {
 public:
  SyntheticCache() : TempFolder("samebits-synthetic") {}
};

// Returns the cells' groups for RunCellGroups: with `cells_per_child` > 1,
// the supported cells of each configuration in matrix order, cut into runs
// of up to that many (the cells of a checkpoint stay together, so a shared
// child loads it once), the costliest groups first (StartOrder's guess,
// summed); every other cell alone. With 1, every cell alone in StartOrder.
std::vector<std::vector<size_t>> CellGroups(const std::vector<Cell>& cells, int cells_per_child);

// Returns the current time as ISO 8601 UTC ("2026-11-29T23:10:28Z").
std::string NowUtc();

// Runs the cells (with --trace when `trace`; with --dump-logits into a
// NewDumpDirectory when `options.dump_logits`), showing progress on stderr
// unless `quiet`. Returns the run: cells in matrix order, machine from the
// children's hello records, timings; not yet judged or stored.
harness::RunResult RunMatrix(const MatrixRunOptions& options, const std::vector<Cell>& cells,
                             bool trace, bool quiet);

// Throws RunError (exit 2, nothing stored) when the engine refused every
// cell of some checkpoint before saying hello, with exit code 2 (bad
// arguments or input: a checkpoint it does not know, an unreadable file).
// Such a selection ran nothing, so it is not a failed check but a command
// that could not be carried out. Cells UNSUPPORTED on this machine are not
// counted.
void RefuseUnrunnableSelection(const harness::RunResult& run);

}  // namespace samebits::runner
