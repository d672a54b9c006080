// The grid a run's report opens with (run_grid.h).
#include "harness/report/run_grid.h"

#include <algorithm>

#include "harness/report/card_grid.h"

namespace samebits::harness::report {
namespace {

// How bad a result is, for the one mark a pair shows: failures first.
int Severity(ResultCode code) {
  if (IsFailure(code)) return code == ResultCode::kFixed ? 4 : 5;
  switch (code) {
    case ResultCode::kKnown:
      return 3;
    case ResultCode::kUnsupported:
      return 2;
    default:
      return 1;
  }
}

}  // namespace

RunGrid BuildRunGrid(const RunResult& run) {
  RunGrid grid;
  std::vector<std::string> checkpoints;
  for (const CellResult& cell : run.cells) {
    auto column = std::find(checkpoints.begin(), checkpoints.end(), cell.checkpoint);
    if (column == checkpoints.end()) {
      checkpoints.push_back(cell.checkpoint);
      column = checkpoints.end() - 1;
    }
    const size_t c = static_cast<size_t>(column - checkpoints.begin());
    auto row = std::find_if(grid.rows.begin(), grid.rows.end(),
                            [&](const RunGrid::Row& r) { return r.config == cell.config.name; });
    if (row == grid.rows.end()) {
      grid.rows.push_back({cell.config.name, {}, {}});
      row = grid.rows.end() - 1;
    }
    if (row->worst.size() <= c) {
      row->worst.resize(c + 1);
      row->cells.resize(c + 1, 0);
    }
    if (!row->worst[c] || Severity(cell.code) > Severity(*row->worst[c])) row->worst[c] = cell.code;
    ++row->cells[c];
  }
  for (RunGrid::Row& row : grid.rows) {
    row.worst.resize(checkpoints.size());
    row.cells.resize(checkpoints.size(), 0);
  }
  for (const std::string& checkpoint : checkpoints) {
    grid.columns.push_back(ShortCheckpointName(checkpoint));
  }
  return grid;
}

std::string RunGridMark(const std::optional<ResultCode>& code) {
  if (!code) return "";
  switch (*code) {
    case ResultCode::kPass:
      return "=";
    case ResultCode::kKnown:
      return "K";
    case ResultCode::kFixed:
      return "F";
    case ResultCode::kFail:
      return "X";
    case ResultCode::kUnresolved:
      return "!";
    case ResultCode::kTimeout:
      return "T";
    case ResultCode::kUnsupported:
      return "-";
  }
  return "?";
}

std::string RunGridLegend() {
  return "The worst result over each pair's scenarios: = PASS (every step's hashes agree); K "
         "KNOWN; - UNSUPPORTED; X FAIL, ! UNRESOLVED, T TIMEOUT and F FIXED fail the run; "
         "blank: no such cell.";
}

std::string BuildText(const BuildInfo& b) {
  std::string text = b.engine + (b.version.empty() ? "" : " " + b.version);
  if (!b.revision.empty()) {
    text += ", revision " + b.revision.substr(0, 12) + (b.dirty ? " (dirty)" : "");
  }
  if (!b.compiler.empty()) text += ", " + b.compiler;
  return text;
}

std::string RunBuildText(const RunResult& run) {
  for (const CellResult& cell : run.cells) {
    if (cell.build) return BuildText(*cell.build);
  }
  return "";
}

}  // namespace samebits::harness::report
