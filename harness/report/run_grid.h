// The grid a run's report opens with (issue 42, "At a glance"): a row per
// configuration, a column per checkpoint, one mark per pair (the worst
// result over its scenarios), so a gate of thousands of cells is read on
// one screen before the failing cells and matrices below it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/analysis/results.h"

namespace samebits::harness::report {

struct RunGrid {
  std::vector<std::string> columns;  // the checkpoints' short names, in run order
  struct Row {
    std::string config;
    // Per column: the worst result of the configuration's cells on that
    // checkpoint (a failure before KNOWN, UNSUPPORTED and PASS), and over
    // how many scenarios; unset where it has none.
    std::vector<std::optional<ResultCode>> worst;
    std::vector<int> cells;
  };
  std::vector<Row> rows;  // in run order
};

// Returns the grid of `run`.
RunGrid BuildRunGrid(const RunResult& run);

// Returns a pair's mark: "=" PASS, "K" KNOWN, "F" FIXED, "X" FAIL, "!"
// UNRESOLVED, "T" TIMEOUT, "-" UNSUPPORTED; "" for no cell.
std::string RunGridMark(const std::optional<ResultCode>& code);

// The legend of the marks, one line.
std::string RunGridLegend();

// Returns a build in one line: "samebits-engine 0.1.0, revision
// 5e0558ab7794 (dirty), GNU 12.2.0".
std::string BuildText(const BuildInfo& build);

// Returns the build of the run's first cell that has one (BuildText); ""
// when none does.
std::string RunBuildText(const RunResult& run);

// Returns what a run's served cells compare, when some hashed less than
// whole logit rows (PROTOCOL.md's `hello.readback`): "Read back: 5 of 7
// cells compare only the chosen token of each step (not whole logit rows:
// all their engine returned)." by the narrowest of them; "" when every cell
// hashed whole rows.
std::string RunReadbackText(const RunResult& run);

// Returns the served engine a run's first cell with a `server` names:
// "Server: http://127.0.0.1:8080, model M." or, for one its bridge started,
// "Server: started per cell (llama-server), model M.", with the
// system_fingerprint its answers carried where they carried one; "" for none.
std::string RunServerText(const RunResult& run);

}  // namespace samebits::harness::report
