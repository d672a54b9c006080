// Timing a run's store writes and printing its time split (run_timing.h).
#include "harness/cli/run_timing.h"

#include <chrono>
#include <cstdio>
#include <vector>

#include "harness/analysis/time_split.h"

namespace samebits::cli {

void AddVerboseFlag(CLI::App* sub, bool* verbose) {
  sub->add_flag("-v,--verbose", *verbose,
                "After the run, prints each cell's time split: the child's start, the engine's "
                "load (reading the checkpoint or synthesising it), the steps, the child's exit, "
                "then judging and storing the cell.");
}

int64_t SaveRunTimed(store::Store& store, harness::RunResult& run) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> cell_ms;
  cell_ms.reserve(run.cells.size());
  Clock::time_point mark = Clock::now();
  store.after_cell_hook = [&](int) {
    const Clock::time_point now = Clock::now();
    cell_ms.push_back(std::chrono::duration<double, std::milli>(now - mark).count());
    mark = now;
  };
  const int64_t id = store.SaveRun(run);
  store.after_cell_hook = nullptr;
  for (size_t i = 0; i < cell_ms.size() && i < run.cells.size(); ++i) {
    run.cells[i].timing.store_ms = cell_ms[i];
  }
  return id;
}

void PrintTimeSplit(const harness::RunResult& run, bool verbose) {
  if (verbose) {
    for (const harness::CellResult& cell : run.cells) {
      std::printf("  %s", harness::FormatCellTiming(cell).c_str());
    }
  }
  std::printf("%s", harness::FormatTimeSplit(run).c_str());
}

}  // namespace samebits::cli
