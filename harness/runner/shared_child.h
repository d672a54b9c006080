// Cells of one configuration in a shared child: samebits-engine's `run
// --serve` (PROTOCOL.md, "Serving several cells") answers one cell per line
// of its stdin, so a group of cells pays for one process start, one dynamic
// link and one load of each synthetic checkpoint instead of one per cell.
//
// Each cell is judged exactly as a child of its own would be: its own
// request, its own transcript (hello and configuration check, steps, done),
// its own dump file, its own deadline, and JudgeChild on its own outcome.
// A fault is kept to the cell it belongs to:
// - a child that crashes, hangs, exits, prints garbage, an `error` or
//   `unsupported` record after answering a cell (its first line a record)
//   fails that cell alone, as its own child would have; the cells after it
//   go to a fresh child;
// - a child that ends or breaks before answering a cell might have died of
//   the previous cell: both are run again, each in a child of its own, and
//   those results stand (a deadline passed before the answer is the cell's
//   own: it is not run again);
// - a child that does not end cleanly when its input closes (an exit code,
//   a signal, output after the last `done`) has the last cell it served run
//   again alone; one that leaves processes behind or its output held open,
//   every cell it served.
// Time: a cell's split is timed from its request; the child's start is its
// first cell's (in that cell's `start`), the child's exit its last cell's
// (in that cell's `exit`), so the splits still add up to the children's
// wall time.
#pragma once

#include <functional>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/runner/cell_runner.h"
#include "harness/runner/matrix.h"
#include "harness/runner/scheduler.h"

namespace samebits::runner {

// Runs the cells of `group` (indices into `cells`, all of one
// configuration and supported here) in their order through shared children
// of samebits-engine (options.profile is null; options.own_profile builds
// their arguments), up to
// `options.cells_per_child` cells a child, telling `progress` as each cell
// starts and as its result is final (the results of one child are final
// when it ended); `platform` receives the machine a hello described.
void RunCellsShared(const std::vector<Cell>& cells, const std::vector<size_t>& group,
                    const RunnerOptions& options, harness::MachineInfo* platform,
                    const GroupProgress& progress);

// The flag after a configuration's arguments that makes samebits-engine
// serve cells, one request line each, instead of running one.
inline constexpr const char* kServeFlag = "--serve";

// Returns the request line of a cell for a shared child: a JSON array of
// its own arguments (CellOwnArguments of `profile`, samebits-engine's).
// Throws ConfigurationNameError when the profile does not read its
// configuration's name.
std::string ServeRequest(const EngineProfile& profile, const Cell& cell,
                         const std::string& dump_file);

}  // namespace samebits::runner
