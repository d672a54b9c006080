#include "harness/report/report_model.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "harness/analysis/batch.h"
#include "harness/analysis/verdict.h"

namespace samebits::harness::report {
namespace {

bool SameHashes(const StepRecord& a, const StepRecord& b) {
  return a.fnv1a64 == b.fnv1a64 && a.xxh3_64 == b.xxh3_64;
}

size_t ChooseBaseRow(const CellGroup& group) {
  for (size_t r = 0; r < group.rows.size(); ++r) {
    const CellResult& c = *group.rows[r].cell;
    if (c.config.name == "reference" && !c.steps.empty()) return r;
  }
  for (size_t r = 0; r < group.rows.size(); ++r) {
    if (!group.rows[r].cell->steps.empty()) return r;
  }
  return 0;
}

void FillAgreement(CellGroup& group) {
  std::map<int, StepColumn> columns;
  for (const ConfigRow& row : group.rows) {
    for (const StepRecord& s : row.cell->steps) {
      columns.emplace(s.index, StepColumn{s.index, s.kind, s.position});
    }
  }
  for (auto& [index, column] : columns) group.columns.push_back(column);
  group.base_row = ChooseBaseRow(group);
  const CellResult& base = *group.rows[group.base_row].cell;
  for (StepColumn& column : group.columns) {
    if (const StepRecord* s = FindStep(base, column.index)) {
      column.token = s->token;
      column.text = s->text.value_or("");
    }
  }
  for (ConfigRow& row : group.rows) {
    for (size_t c = 0; c < group.columns.size(); ++c) {
      const StepRecord* mine = FindStep(*row.cell, group.columns[c].index);
      const StepRecord* theirs = FindStep(base, group.columns[c].index);
      Agreement a = Agreement::kMissing;
      if (mine && theirs) a = SameHashes(*mine, *theirs) ? Agreement::kSame : Agreement::kDiffers;
      row.agreement.push_back(a);
      if (a == Agreement::kDiffers && !row.first_divergence) row.first_divergence = c;
    }
  }
}

std::string ResolveDumpPath(const std::string& path, const ReportOptions& options) {
  if (options.dump_base_dir.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(options.dump_base_dir) / path).string();
}

// Returns the row of `cell`'s dump that holds step `index` (dumps hold rows
// in step order, one per reported step), or -1.
int64_t DumpRowOf(const CellResult& cell, int index) {
  for (size_t r = 0; r < cell.steps.size(); ++r) {
    if (cell.steps[r].index == index) return static_cast<int64_t>(r);
  }
  return -1;
}

DumpComparison CompareDumps(const CellGroup& group, const ConfigRow& row,
                            const ReportOptions& options) {
  const CellResult& base = *group.rows[group.base_row].cell;
  const CellResult& other = *row.cell;
  DumpComparison out{
      group.checkpoint, group.scenario, base.config.name, other.config.name, "", 0, {}};
  try {
    const LogitDump a = ReadLogitDump(ResolveDumpPath(base.dump_path, options),
                                      static_cast<int64_t>(base.steps.size()));
    const LogitDump b = ReadLogitDump(ResolveDumpPath(other.dump_path, options),
                                      static_cast<int64_t>(other.steps.size()));
    if (a.vocab_size != b.vocab_size) {
      throw std::runtime_error("logit dumps of " + base.config.name + " and " + other.config.name +
                               " have different row lengths (" + std::to_string(a.vocab_size) +
                               " and " + std::to_string(b.vocab_size) + " values)");
    }
    for (const CellResult* cell : {&base, &other}) {
      // The child's `hello` said how long a row is; a dump must agree.
      if (cell->vocab_size > 0 && cell->vocab_size != a.vocab_size) {
        throw std::runtime_error("logit dump " + cell->dump_path + " of " + cell->config.name +
                                 ": rows of " + std::to_string(a.vocab_size) +
                                 " values, but the checkpoint's vocabulary has " +
                                 std::to_string(cell->vocab_size));
      }
    }
    out.vocab_size = a.vocab_size;
    for (size_t c = 0; c < group.columns.size(); ++c) {
      if (row.agreement[c] != Agreement::kDiffers) continue;
      const int index = group.columns[c].index;
      out.steps.push_back(
          {index, CompareLogitRows(a.Row(DumpRowOf(base, index)), b.Row(DumpRowOf(other, index)))});
    }
  } catch (const std::exception& e) {
    out.error = e.what();
    out.steps.clear();
  }
  return out;
}

bool SameMath(const MathLibraryInfo& a, const MathLibraryInfo& b) {
  return a.profile == b.profile && a.name == b.name && a.version == b.version &&
         a.fingerprint == b.fingerprint;
}

bool SameBuild(const BuildInfo& a, const BuildInfo& b) {
  return a.engine == b.engine && a.version == b.version && a.revision == b.revision &&
         a.compiler == b.compiler && a.flags == b.flags && a.dirty == b.dirty;
}

}  // namespace

ReportModel BuildReportModel(const RunResult& run, const ReportOptions& options) {
  ReportModel model;
  model.run = &run;
  std::map<std::pair<std::string, std::string>, size_t> group_of;
  for (const CellResult& cell : run.cells) {
    const auto key = std::make_pair(cell.checkpoint, cell.scenario);
    auto it = group_of.find(key);
    if (it == group_of.end()) {
      it = group_of.emplace(key, model.groups.size()).first;
      model.groups.push_back(CellGroup{cell.checkpoint, cell.scenario, {}, {}, 0});
    }
    model.groups[it->second].rows.push_back(ConfigRow{&cell, {}, std::nullopt});

    for (size_t i = 0; i < kAllResultCodes.size(); ++i) {
      if (kAllResultCodes[i] == cell.code) ++model.counts[i];
    }
    if (IsFailure(cell.code)) model.passed = false;
    if (cell.math && std::none_of(model.math_libraries.begin(), model.math_libraries.end(),
                                  [&](const auto& m) { return SameMath(m, *cell.math); })) {
      model.math_libraries.push_back(*cell.math);
    }
    if (cell.build && std::none_of(model.builds.begin(), model.builds.end(),
                                   [&](const auto& b) { return SameBuild(b, *cell.build); })) {
      model.builds.push_back(*cell.build);
    }
  }
  // The verdict is the gate's own (a run with no reference, or that checked
  // nothing, does not pass), so a report never says PASS where the gate
  // exited non-zero.
  if (!GatePasses(run)) model.passed = false;
  for (CellGroup& group : model.groups) {
    FillAgreement(group);
    if (!options.read_dumps) continue;
    const CellResult& base = *group.rows[group.base_row].cell;
    for (size_t r = 0; r < group.rows.size(); ++r) {
      const ConfigRow& row = group.rows[r];
      if (r == group.base_row || !row.first_divergence) continue;
      if (base.dump_path.empty() || row.cell->dump_path.empty()) continue;
      model.dumps.push_back(CompareDumps(group, row, options));
    }
  }
  return model;
}

const char* DiagnosisKindTitle(Diagnosis::Kind kind) {
  return KindInfo(kind).title;
}

std::string FormatMs(double ms) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", ms);
  return buf;
}

std::string FormatDouble(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  return buf;
}

std::string DescribeStep(const StepColumn& column) {
  return "step " + std::to_string(column.index) + " (" + column.kind + ", position " +
         std::to_string(column.position) + ")";
}

bool HasTokenText(const CellGroup& group) {
  for (const StepColumn& c : group.columns) {
    if (!c.text.empty()) return true;
  }
  return false;
}

std::string TokenWithText(const StepColumn& column) {
  std::string shown;
  for (unsigned char ch : column.text) {
    if (ch == '\n') {
      shown += "\\n";
    } else if (ch == '\t') {
      shown += "\\t";
    } else if (ch == '\r') {
      shown += "\\r";
    } else if (ch < 0x20 || ch == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", ch);
      shown += buf;
    } else {
      shown += static_cast<char>(ch);
    }
  }
  return std::to_string(column.token) + " \"" + shown + "\"";
}

std::string DivergencePlace(const Divergence& d) {
  std::string text = "step " + std::to_string(d.step_index);
  if (!d.kind.empty()) {
    text += " (" + d.kind + ", position " + std::to_string(d.position) + ")";
  }
  if (!d.batch_place.empty()) text += " — " + d.batch_place;
  if (d.layer) text += ", layer " + std::to_string(*d.layer);
  if (!d.op.empty()) text += ", op " + d.op;
  if (!d.detail.empty()) text += ": " + d.detail;
  return text;
}

std::string FirstDivergenceText(const RunResult& run, const CellGroup& group,
                                const ConfigRow& row) {
  if (row.first_divergence) {
    const CellResult& base = *group.rows[group.base_row].cell;
    const StepColumn& column = group.columns[*row.first_divergence];
    const std::string place = DivergenceBatchPlace(base, *row.cell, column.index);
    return DescribeStep(column) + (place.empty() ? "" : " — " + place) + " vs " + base.config.name;
  }
  for (const Divergence& d : run.diagnosis.divergences) {
    if (d.checkpoint != group.checkpoint || d.scenario != group.scenario) continue;
    if (d.config_a == row.cell->config.name) return DivergencePlace(d) + " vs " + d.config_b;
    if (d.config_b == row.cell->config.name) return DivergencePlace(d) + " vs " + d.config_a;
  }
  return "";
}

}  // namespace samebits::harness::report
