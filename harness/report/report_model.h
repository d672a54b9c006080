// What every report format shows, computed once from a `RunResult`: the
// cells grouped by (checkpoint, scenario), each group's configuration x step
// agreement matrix against a base configuration, each configuration's first
// divergence, counts by result code, the distinct math libraries and builds,
// and ULP statistics when raw logit dumps exist. Exporters only format it, so
// the four formats cannot disagree about what happened.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/numerics/hash.h"
#include "harness/analysis/results.h"
#include "harness/analysis/ulp.h"

namespace samebits::harness::report {

// How one step of one configuration compares with the base configuration.
enum class Agreement : uint8_t {
  kSame,     // both hashes equal the base's
  kDiffers,  // a hash differs
  kMissing,  // this configuration or the base has no such step
};

// One column of a group's matrix: a step index seen in any configuration.
struct StepColumn {
  int index = 0;
  std::string kind;
  int position = 0;
  // The base configuration's chosen token at this step and its decoded
  // text (empty when the engine sent none, e.g. no vocabulary).
  int token = 0;
  std::string text;
};

// One row of a group's matrix: one configuration (one cell).
struct ConfigRow {
  const CellResult* cell = nullptr;
  std::vector<Agreement> agreement;  // one per column of the group
  // The column of the first step whose hash differs from the base's.
  std::optional<size_t> first_divergence;
};

// The cells of one (checkpoint, scenario), in the run's order.
struct CellGroup {
  std::string checkpoint, scenario;
  std::vector<StepColumn> columns;  // sorted by step index
  std::vector<ConfigRow> rows;
  // The row every other is compared with: the configuration named
  // "reference" when it produced steps, else the first that did, else row 0.
  size_t base_row = 0;
};

// ULP statistics for one step at which two configurations' dumps differ.
struct StepLogitDiff {
  int step_index = 0;
  RowComparison comparison;
};

// Two configurations of one group compared through their raw logit dumps.
struct DumpComparison {
  std::string checkpoint, scenario;
  std::string config_a, config_b;  // config_a is the group's base
  std::string error;               // why the dumps could not be compared
  int64_t vocab_size = 0;
  std::vector<StepLogitDiff> steps;  // only the steps whose hashes differ
};

struct ReportOptions {
  // Relative `CellResult::dump_path` values are resolved against this
  // directory (empty: the current directory).
  std::string dump_base_dir;
  // Read raw logit dumps for ULP statistics when both sides of a differing
  // pair have one.
  bool read_dumps = true;
};

// The result codes in report order: the order of the table kResultCodes
// (harness/analysis/results.h).
inline constexpr std::array<ResultCode, kResultCodes.size()> kAllResultCodes = [] {
  std::array<ResultCode, kResultCodes.size()> codes{};
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = kResultCodes[i].code;
  return codes;
}();

struct ReportModel {
  const RunResult* run = nullptr;
  std::vector<CellGroup> groups;
  std::array<int, kAllResultCodes.size()> counts{};  // indexed like kAllResultCodes
  bool passed = true;                                // the headline verdict
  std::vector<MathLibraryInfo> math_libraries;       // distinct, first-seen order
  std::vector<BuildInfo> builds;                     // distinct, first-seen order
  std::vector<DumpComparison> dumps;
};

// Returns the model of `run`. Reads dump files when `options.read_dumps`;
// a dump that cannot be read becomes a `DumpComparison::error`, never an
// exception, so a report is still written.
ReportModel BuildReportModel(const RunResult& run, const ReportOptions& options = {});

// The stable identifier of a diagnosis kind is DiagnosisKindName
// (harness/analysis/results.h), shared with the store.
// Returns a short title for a person: "All configurations agree", ...
const char* DiagnosisKindTitle(Diagnosis::Kind kind);

// Hashes are written as the engine writes them (engine/numerics/hash.h).
using numerics::Hex16;

// Returns `ms` with one decimal, locale-independent ("12.5").
std::string FormatMs(double ms);

// Returns `value` in shortest round-trip form for a person ("1.1920929e-07").
std::string FormatDouble(double value);

// Returns "step 3 (decode, position 14)" for a column of `group`.
std::string DescribeStep(const StepColumn& column);

// Returns true when some column of `group` carries decoded token text.
bool HasTokenText(const CellGroup& group);

// Returns a column's token for a person: `17 "Once"`, with line breaks,
// tabs and other control characters spelled as escapes (`\n`), so that
// white space stays visible and one step stays one line.
std::string TokenWithText(const StepColumn& column);

// Returns where `cell` first diverges, for a person: from the matrix when
// its hashes differ from the base's, else from a matching divergence of the
// diagnosis (which may be against the stored reference); "" when neither.
std::string FirstDivergenceText(const RunResult& run, const CellGroup& group, const ConfigRow& row);

// Returns "step 3 (decode, position 14), layer 2 op attn_norm" for `d`.
std::string DivergencePlace(const Divergence& d);

}  // namespace samebits::harness::report
