// Checking a finished child's claims (engine_claims.h).
#include "harness/runner/engine_claims.h"

#include <filesystem>
#include <optional>
#include <stdexcept>

#include "harness/analysis/dump_rows.h"
#include "harness/analysis/ulp.h"
#include "harness/runner/scenario_rows.h"

namespace samebits::runner {
namespace {

namespace fs = std::filesystem;
using harness::CellResult;

// Returns "N step record(s)".
std::string Steps(size_t n) {
  return std::to_string(n) + (n == 1 ? " step record" : " step records");
}

// Returns why the child's steps do not match its scenario, or "".
std::string StepsBroken(const Cell& cell, const CellResult& r) {
  const std::optional<int64_t> rows = ScenarioFileOutputRows(cell.scenario_file);
  const std::string scenario = "scenario " + cell.scenario;
  if (rows && static_cast<int64_t>(r.steps.size()) != *rows) {
    return "expected " + Steps(static_cast<size_t>(*rows)) + " (one per output row of " + scenario +
           "), the engine reported " + std::to_string(r.steps.size());
  }
  if (r.steps.empty()) {
    return "expected at least one step record (one per output row of " + scenario +
           "), the engine reported none";
  }
  return "";
}

// Returns why the dump at `file` does not hold the child's rows, or "".
std::string DumpBroken(const std::string& file, const CellResult& r) {
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    return "the engine was asked for a raw logit dump (" + file + ") and wrote none";
  }
  const uintmax_t size = fs::file_size(file, ec);
  if (ec) return "its raw logit dump " + file + " cannot be read: " + ec.message();
  const auto rows = static_cast<uintmax_t>(r.steps.size());
  const auto vocab = static_cast<uintmax_t>(r.vocab_size > 0 ? r.vocab_size : 0);
  const uintmax_t expected = rows * vocab * 4;
  if (size != expected) {
    std::string why = "expected its raw logit dump " + file + " to hold " + std::to_string(rows) +
                      " rows (one per step) of " + std::to_string(vocab) +
                      " float32 values (the hello's vocab_size), " + std::to_string(expected) +
                      " bytes; it holds " + std::to_string(size) + " bytes";
    if (rows > 0 && size % (rows * 4) == 0 && size > 0) {
      why += " (" + std::to_string(rows) + " rows of " + std::to_string(size / (rows * 4)) +
             " values: the hello's vocabulary does not match the rows)";
    }
    return why;
  }
  try {
    const harness::LogitDump dump =
        harness::ReadLogitDump(file, static_cast<int64_t>(r.steps.size()));
    const std::string bad = harness::DumpRowsMismatch(dump, r.steps);
    if (!bad.empty()) {
      return "expected every row of its raw logit dump " + file +
             " to hash to its step record, as the protocol says: " + bad;
    }
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

void CheckEngineClaims(const Cell& cell, const std::string& dump_file, CellResult& result) {
  std::error_code ec;
  if (result.code == harness::ResultCode::kPass) {
    std::string broken = StepsBroken(cell, result);
    if (broken.empty() && !dump_file.empty()) broken = DumpBroken(dump_file, result);
    if (broken.empty()) {
      if (!dump_file.empty()) result.dump_path = dump_file;
      return;
    }
    result.code = harness::ResultCode::kUnresolved;
    result.message = "the engine's output does not check: " + broken;
  }
  if (!dump_file.empty()) fs::remove(dump_file, ec);  // never read, never left behind
}

}  // namespace samebits::runner
