// Summing and writing where a run's time went (time_split.h).
#include "harness/analysis/time_split.h"

#include <cstdio>
#include <vector>

namespace samebits::harness {
namespace {

bool Timed(const CellTiming& t) {
  for (const auto& [name, part] : TimingParts()) {
    if (t.*part >= 0) return true;
  }
  return false;
}

std::string Format(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace

const std::vector<TimingPart>& TimingParts() {
  static const std::vector<TimingPart> kParts = {
      {"start", &CellTiming::start_ms}, {"load", &CellTiming::load_ms},
      {"steps", &CellTiming::steps_ms}, {"exit", &CellTiming::exit_ms},
      {"judge", &CellTiming::judge_ms}, {"store", &CellTiming::store_ms}};
  return kParts;
}

TimeTotals SumTiming(const RunResult& run) {
  TimeTotals totals;
  for (const CellResult& cell : run.cells) {
    if (!Timed(cell.timing)) continue;
    ++totals.cells;
    totals.child_ms += cell.elapsed_ms;
    for (const auto& [name, part] : TimingParts()) {
      if (cell.timing.*part >= 0) totals.sum.*part += cell.timing.*part;
    }
  }
  return totals;
}

std::string FormatTimeSplit(const RunResult& run) {
  const TimeTotals totals = SumTiming(run);
  if (totals.cells == 0) return "";
  std::string line = "Time in " + std::to_string(totals.cells) + " cells (the children's wall " +
                     Format("%.1f s", totals.child_ms / 1000) + ", summed):";
  const char* separator = " ";
  for (const auto& [name, part] : TimingParts()) {
    line += separator + std::string(name) + Format(" %.1f s", totals.sum.*part / 1000);
    separator = ", ";
  }
  return line + "\n";
}

std::string FormatCellTiming(const CellResult& cell) {
  std::string line = cell.checkpoint + " " + cell.scenario + " " + cell.config.name + ": " +
                     Format("%.1f ms", cell.elapsed_ms);
  const std::vector<TimingPart>& parts = TimingParts();
  // The child's parts (start to exit) add up to its wall time; judging and
  // storing follow it.
  std::string child, after;
  for (size_t i = 0; i < parts.size(); ++i) {
    const double ms = cell.timing.*parts[i].field;
    if (ms < 0) continue;
    std::string& into = i < 4 ? child : after;
    into += (into.empty() ? ""
             : i < 4      ? " + "
                          : ", ") +
            std::string(parts[i].name) + Format(" %.1f", ms);
  }
  if (!child.empty()) line += " = " + child;
  if (!after.empty()) line += "; " + after + " ms";
  return line + "\n";
}

}  // namespace samebits::harness
