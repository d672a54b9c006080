// Terminal summaries (summary.h).
#include "harness/analysis/summary.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "harness/analysis/compare.h"
#include "harness/analysis/rollup.h"

namespace samebits::harness {

std::map<ResultCode, int> CountByCode(const RunResult& run) {
  std::map<ResultCode, int> counts;
  for (const CellResult& c : run.cells) ++counts[c.code];
  return counts;
}

std::string FormatSummary(const RunResult& run, bool diagnose) {
  std::ostringstream out;
  // One line per result code x configuration, so 23 failures of one
  // configuration read as one line (rollup.h).
  const std::vector<std::string> failed = RollUpFailedCells(run, /*stderr_lines=*/5);
  if (!failed.empty()) {
    out << "Failed cells:\n";
    for (const std::string& line : failed) out << "  " << line << "\n";
    out << "\n";
  }
  char elapsed[64];
  std::snprintf(elapsed, sizeof elapsed, "%.1f", run.elapsed_ms / 1000.0);
  out << "Run " << run.run_id << ": " << run.cells.size() << " cells in " << elapsed << " s\n";
  for (const auto& [code, count] : CountByCode(run)) {
    char line[128];
    std::snprintf(line, sizeof line, "  %-12s: %d  (%s)\n", CodeInfo(code).name, count,
                  CodeInfo(code).label);
    out << line;
  }
  // Why cells were not run, once per reason: a missing real checkpoint must
  // be visible here, not only in the store, since UNSUPPORTED fails nothing.
  std::vector<std::pair<std::string, int>> reasons;
  for (const CellResult& c : run.cells) {
    if (c.code != ResultCode::kUnsupported) continue;
    auto it = std::find_if(reasons.begin(), reasons.end(),
                           [&](const auto& r) { return r.first == c.message; });
    if (it == reasons.end()) {
      reasons.push_back({c.message, 1});
    } else {
      ++it->second;
    }
  }
  for (const auto& [reason, count] : reasons) {
    out << "    UNSUPPORTED (" << count << (count == 1 ? " cell" : " cells") << "): " << reason
        << "\n";
  }
  if (diagnose) {
    out << "\n" << run.diagnosis.headline << "\n";
    for (const std::string& d : run.diagnosis.details) out << d << "\n";
  }
  return out.str();
}

std::string FormatRunDetails(const RunResult& run, bool with_steps) {
  std::ostringstream out;
  out << "Run " << run.run_id << " started " << run.started_at << ", " << run.cells.size()
      << " cells\n";
  out << "Machine: " << run.machine.arch << ", " << run.machine.cpu << ", " << run.machine.os << " "
      << run.machine.kernel << ", " << run.machine.libc << "\n";
  if (!run.command.empty()) out << "Command: " << run.command << "\n";
  if (!run.diagnosis.headline.empty()) out << "Diagnosis: " << run.diagnosis.headline << "\n";
  for (const CellResult& c : run.cells) {
    char elapsed[32];
    std::snprintf(elapsed, sizeof elapsed, "%.0f ms", c.elapsed_ms);
    out << "\n"
        << ResultCodeName(c.code) << ": " << c.checkpoint << " " << c.scenario << " "
        << c.config.name << " (kernels " << c.config.kernels << ", threads " << c.config.threads
        << ", isa " << c.config.isa << (c.isa_used.empty() ? "" : " -> " + c.isa_used) << ", math "
        << c.config.math;
    if (c.config.gemv_chunk_bytes > 0) out << ", gemv chunk " << c.config.gemv_chunk_bytes << " B";
    out << ") " << elapsed << "\n";
    if (!c.message.empty()) out << "  " << c.message << "\n";
    if (c.build) {
      out << "  build: " << c.build->engine << " " << c.build->version << " " << c.build->revision
          << (c.build->dirty ? " (dirty)" : "") << ", " << c.build->compiler << "\n";
    }
    if (c.math) {
      out << "  math: " << c.math->profile << ": " << c.math->name << " " << c.math->version
          << " fingerprint " << c.math->fingerprint << "\n";
    }
    if (with_steps) {
      for (const StepRecord& s : c.steps) {
        char line[160];
        std::snprintf(line, sizeof line,
                      "  %3d %-7s pos %4d in %6d -> %6d  fnv1a64 %s  xxh3_64 %s%s\n", s.index,
                      s.kind.c_str(), s.position, s.input_token, s.token, Hex16(s.fnv1a64).c_str(),
                      Hex16(s.xxh3_64).c_str(), (s.nan_count || s.inf_count) ? "  (NaN/Inf)" : "");
        out << line;
      }
    }
  }
  return out.str();
}

}  // namespace samebits::harness
