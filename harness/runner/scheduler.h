// Runs the cells of a matrix in parallel, up to a job limit, reporting
// progress as children finish.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/runner/cell_runner.h"
#include "harness/runner/matrix.h"

namespace samebits::runner {

// What a progress display is told. Calls are serialised by the scheduler.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  // A cell finished; `done` of `total` are finished.
  virtual void CellFinished(const harness::CellResult& result, int done, int total) = 0;
  // Called about five times a second while children run: the running cell
  // that has run longest, and for how long.
  virtual void Tick(const std::string& slowest, double slowest_seconds) {}
};

// Returns one result per cell, in the cells' order. `run_one` runs a cell
// (RunCell by default; tests pass fakes). `jobs` < 1 means one. Cells are
// started in StartOrder.
std::vector<harness::CellResult> RunCells(
    const std::vector<Cell>& cells, int jobs, ProgressSink* progress,
    const std::function<harness::CellResult(const Cell&)>& run_one);

// What a group of cells reports to the scheduler as it runs them.
struct GroupProgress {
  std::function<void(size_t index)> started;                               // a cell starts
  std::function<void(size_t index, harness::CellResult result)> finished;  // final
};

// Returns one result per cell, in the cells' order, running `groups` (each
// a list of indices into `cells`, every cell in one group) in the order
// given, up to `jobs` groups at once; `run_group` runs one group, telling
// `progress` as each of its cells starts and finishes (each once). A group
// that throws fails the cells it had not finished (UNRESOLVED, naming the
// harness's error).
std::vector<harness::CellResult> RunCellGroups(
    const std::vector<Cell>& cells, const std::vector<std::vector<size_t>>& groups, int jobs,
    ProgressSink* progress,
    const std::function<void(const std::vector<size_t>& group, const GroupProgress& progress)>&
        run_group);

// Returns a label for a cell: "synthetic:tiny classic cpu-t2".
std::string CellLabel(const Cell& cell);
std::string CellLabel(const harness::CellResult& cell);

// A progress display: on a terminal, one line rewritten in place with the
// counts so far and the slowest running child; otherwise one plain line per
// finished cell (lit's style), so logs stay readable.
class ConsoleProgress : public ProgressSink {
 public:
  // `terminal`: whether `out` (a FILE such as stderr) is a terminal.
  ConsoleProgress(std::FILE* out, bool terminal);
  ~ConsoleProgress() override;
  void CellFinished(const harness::CellResult& result, int done, int total) override;
  void Tick(const std::string& slowest, double slowest_seconds) override;
  // Clears the progress line (on a terminal) before other output.
  void Finish();

 private:
  void Draw();

  std::FILE* out_;
  bool terminal_;
  int done_ = 0;
  int total_ = 0;
  int counts_[harness::kResultCodes.size()] = {};  // by ResultCode
  std::string slowest_;
  double slowest_seconds_ = 0;
  bool drawn_ = false;
};

}  // namespace samebits::runner
