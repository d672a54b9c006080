// How far apart two cells' logits are (logit_difference.h).
#include "harness/analysis/logit_difference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace samebits::harness {
namespace {

// Returns `value` for a person ("1.1920929e-07"), as the reports write it
// (report::FormatDouble, which lives in the report library above this one).
std::string Short(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  return buf;
}

// One side's row of the step: its values (when known) and its statistics.
struct Side {
  std::vector<float> values;  // empty when only the statistics are known
  DumpRowStats stats;
  int64_t row_length = 0;
};

// Returns the position of step `index` in `cell`'s steps (a dump's row), or -1.
int64_t RowOf(const CellResult& cell, int index) {
  for (size_t r = 0; r < cell.steps.size(); ++r) {
    if (cell.steps[r].index == index) return static_cast<int64_t>(r);
  }
  return -1;
}

std::optional<Side> LoadSide(const CellResult& cell, int index, const std::string& base) {
  const int64_t r = RowOf(cell, index);
  if (r < 0) return std::nullopt;
  Side side;
  if (const std::optional<harness::LogitDump> dump = LoadCellDump(cell, base)) {
    const std::span<const float> row = dump->Row(r);
    side.values.assign(row.begin(), row.end());
  } else if (cell.dump && static_cast<size_t>(r) < cell.dump->rows.size()) {
    side.stats = cell.dump->rows[static_cast<size_t>(r)];
    side.row_length = cell.dump->row_length;
    return side;
  } else {
    return std::nullopt;
  }
  side.stats = RowStatistics(side.values);
  side.row_length = static_cast<int64_t>(side.values.size());
  return side;
}

}  // namespace

std::optional<harness::LogitDump> LoadCellDump(const CellResult& cell,
                                               const std::string& dump_base_dir) {
  const auto rows = static_cast<int64_t>(cell.steps.size());
  if (cell.dump && !cell.dump->values.empty()) {
    harness::LogitDump dump;
    dump.rows = rows;
    dump.vocab_size = cell.dump->row_length;
    if (dump.vocab_size <= 0 ||
        cell.dump->values.size() != static_cast<size_t>(rows * dump.vocab_size)) {
      throw std::runtime_error("the bundle's logit rows are not " + std::to_string(rows) +
                               " rows (one per step) of " + std::to_string(dump.vocab_size) +
                               " values");
    }
    dump.values = cell.dump->values;
    return dump;
  }
  if (cell.dump_path.empty()) return std::nullopt;
  std::string path = cell.dump_path;
  if (!dump_base_dir.empty() && !std::filesystem::path(path).is_absolute())
    path = (std::filesystem::path(dump_base_dir) / path).string();
  return harness::ReadLogitDump(path, rows);
}

DumpRowStats RowStatistics(std::span<const float> row) {
  DumpRowStats s;
  s.argmax = ArgMax(row);
  for (const float v : row) {
    if (std::isnan(v)) {
      ++s.nan_count;
    } else if (std::isinf(v)) {
      ++s.inf_count;
    } else {
      s.max_abs = std::max(s.max_abs, std::fabs(v));
    }
  }
  return s;
}

std::optional<LogitDifference> CompareStepLogits(const CellResult& x, const CellResult& y,
                                                 int step_index, const std::string& dump_base_dir) {
  LogitDifference d;
  try {
    const std::optional<Side> a = LoadSide(x, step_index, dump_base_dir);
    const std::optional<Side> b = LoadSide(y, step_index, dump_base_dir);
    if (!a || !b) return std::nullopt;
    d.a = a->stats;
    d.b = b->stats;
    d.row_length = a->row_length;
    if (a->row_length != b->row_length) {
      d.error = "rows of " + std::to_string(a->row_length) + " and " +
                std::to_string(b->row_length) + " values";
    } else if (!a->values.empty() && !b->values.empty()) {
      d.compared_rows = true;
      d.rows = CompareLogitRows(a->values, b->values);
    }
  } catch (const std::exception& e) {
    d = LogitDifference{};
    d.error = e.what();
  }
  return d;
}

std::string DescribeLogitDifference(const LogitDifference& d) {
  if (!d.error.empty()) return "logits not compared: " + d.error;
  const std::string argmax =
      d.a.argmax == d.b.argmax
          ? "argmax " + std::to_string(d.a.argmax) + " on both"
          : "argmax " + std::to_string(d.a.argmax) + " vs " + std::to_string(d.b.argmax);
  if (!d.compared_rows) {
    return "logits (statistics only): " + argmax + ", max |logit| " + Short(d.a.max_abs) + " vs " +
           Short(d.b.max_abs);
  }
  const RowComparison& r = d.rows;
  const std::string ulp = r.max_ulp == kUlpNaNMismatch
                              ? "a NaN vs a number"
                              : "max " + std::to_string(r.max_ulp) + " ulp";
  return "logits: " + ulp + ", " + std::to_string(r.differing) + " of " +
         std::to_string(d.row_length) + " values differ, max |a - b| " + Short(r.max_abs_diff) +
         ", " + argmax;
}

}  // namespace samebits::harness
