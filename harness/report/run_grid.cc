// The grid a run's report opens with (run_grid.h).
#include "harness/report/run_grid.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "harness/analysis/bounded_json.h"
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

std::string RunReadbackText(const RunResult& run) {
  std::optional<protocol::Readback> narrowest;
  size_t partial = 0;
  for (const CellResult& cell : run.cells) {
    if (!cell.readback || cell.readback->kind == "full") continue;
    ++partial;
    narrowest = protocol::NarrowerReadback(narrowest, *cell.readback);
  }
  if (!narrowest) return "";
  return "Read back: " + std::to_string(partial) + " of " + std::to_string(run.cells.size()) +
         " cells compare only " + protocol::DescribeReadback(*narrowest) +
         " (not whole logit rows: all their engine returned).";
}

namespace {

// The string at `key` of `object`, or "".
std::string StringAt(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// "Server: WHERE, model M, system_fingerprint F." for one hello's `server`
// object (PROTOCOL.md), or "" when it names neither where nor which model.
std::string ServerLine(const nlohmann::json& server) {
  std::string model;
  if (const auto it = server.find("model"); it != server.end() && it->is_object())
    model = StringAt(*it, "id");
  std::string where = StringAt(server, "url");
  if (const auto launched = server.find("launched"); launched != server.end() &&
                                                     launched->is_array() && !launched->empty() &&
                                                     launched->front().is_string()) {
    const std::string program = launched->front().get<std::string>();
    where = "started per cell (" + std::filesystem::path(program).filename().string() + ")";
  }
  std::string fingerprints;
  if (const auto fp = server.find("system_fingerprint"); fp != server.end() && fp->is_array()) {
    for (const nlohmann::json& value : *fp) {
      if (value.is_string())
        fingerprints += (fingerprints.empty() ? "" : ", ") + value.get<std::string>();
    }
  }
  if (where.empty() && model.empty()) return "";
  return "Server: " + (where.empty() ? std::string("unnamed") : where) +
         (model.empty() ? "" : ", model " + model) +
         (fingerprints.empty() ? "" : ", system_fingerprint " + fingerprints) + ".";
}

}  // namespace

std::string RunServerText(const RunResult& run) {
  for (const CellResult& cell : run.cells) {
    if (cell.server.empty()) continue;
    try {
      const nlohmann::json server = ParseBoundedJson(cell.server, JsonLimits{});
      if (!server.is_object()) continue;
      if (std::string line = ServerLine(server); !line.empty()) return line;
    } catch (const std::runtime_error&) {
      // The store and bundles keep only objects: nothing here to name.
    }
  }
  return "";
}

std::string RunBuildText(const RunResult& run) {
  for (const CellResult& cell : run.cells) {
    if (cell.build) return BuildText(*cell.build);
  }
  return "";
}

}  // namespace samebits::harness::report
