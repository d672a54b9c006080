// Terminal summaries (summary.h).
#include "harness/analysis/summary.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "harness/analysis/compare.h"
#include "harness/analysis/machine_name.h"
#include "harness/analysis/numeric_profile.h"
#include "harness/analysis/rollup.h"
#include "harness/analysis/terminal_text.h"

namespace samebits::harness {
namespace {

// Every string from outside (names, a child's messages and stderr) is
// escaped before it reaches a terminal (terminal_text.h).
std::string T(std::string_view text) {
  return TerminalSafe(text);
}

}  // namespace

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
    for (const std::string& line : failed) out << "  " << T(line) << "\n";
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
    out << "    UNSUPPORTED (" << count << (count == 1 ? " cell" : " cells") << "): " << T(reason)
        << "\n";
  }
  if (diagnose) {
    out << "\n" << T(run.diagnosis.headline) << "\n";
    for (const std::string& d : run.diagnosis.details) out << T(d) << "\n";
  }
  return out.str();
}

std::string FormatRunDetails(const RunResult& run, bool with_steps) {
  std::ostringstream out;
  out << "Run " << run.run_id << " started " << run.started_at << ", " << run.cells.size()
      << " cells\n";
  out << "Machine: " << T(MachineNameOf(run)) << " (" << T(run.machine.arch) << ", "
      << T(run.machine.cpu) << ", " << T(run.machine.os) << " " << T(run.machine.kernel) << ", "
      << T(run.machine.libc) << ")\n";
  if (!run.command.empty()) out << "Command: " << T(run.command) << "\n";
  if (run.shard) {
    out << "Shard: " << run.shard->index << "/" << run.shard->count << " of group "
        << T(run.shard->group) << " (`samebits verdict --group " << T(run.shard->group) << "`)\n";
  }
  if (!run.diagnosis.headline.empty()) out << "Diagnosis: " << T(run.diagnosis.headline) << "\n";
  for (const CellResult& c : run.cells) {
    char elapsed[32];
    std::snprintf(elapsed, sizeof elapsed, "%.0f ms", c.elapsed_ms);
    out << "\n"
        << ResultCodeName(c.code) << ": " << T(c.checkpoint) << " " << T(c.scenario) << " "
        << T(c.config.name) << " (kernels " << T(c.config.kernels) << ", threads "
        << c.config.threads << ", isa " << T(c.config.isa)
        << (c.isa_used.empty() ? "" : " -> " + T(c.isa_used)) << ", math " << T(c.config.math);
    if (c.config.quant_dot != kExactQuantDot) out << ", quant-dot " << T(c.config.quant_dot);
    if (c.config.gemv_chunk_bytes > 0) out << ", gemv chunk " << c.config.gemv_chunk_bytes << " B";
    out << ") " << elapsed << "\n";
    if (!c.message.empty()) out << "  " << T(c.message) << "\n";
    if (c.build) {
      out << "  build: " << T(c.build->engine) << " " << T(c.build->version) << " "
          << T(c.build->revision) << (c.build->dirty ? " (dirty)" : "") << ", "
          << T(c.build->compiler) << "\n";
    }
    if (c.math) {
      out << "  math: " << T(c.math->profile) << ": " << T(c.math->name) << " "
          << T(c.math->version) << " fingerprint " << T(c.math->fingerprint) << "\n";
    }
    if (c.device) out << "  device: " << T(DescribeDevice(*c.device)) << "\n";
    if (c.repeats && c.repeats->count > 1) {
      out << "  repeats: " << c.repeats->count << " in one process, " << c.repeats->distinct
          << " distinct output" << (c.repeats->distinct == 1 ? "" : "s") << "\n";
    }
    if (c.sampling) out << "  sampling: " << SamplingText(c) << "\n";
    if (with_steps) {
      for (const StepRecord& s : c.steps) {
        char line[160];
        std::snprintf(line, sizeof line,
                      "  %3d %-7s pos %4d in %6d -> %6d  fnv1a64 %s  xxh3_64 %s%s\n", s.index,
                      T(s.kind).c_str(), s.position, s.input_token, s.token,
                      Hex16(s.fnv1a64).c_str(), Hex16(s.xxh3_64).c_str(),
                      (s.nan_count || s.inf_count) ? "  (NaN/Inf)" : "");
        out << line;
      }
    }
  }
  return out.str();
}

}  // namespace samebits::harness
