// Comparing two runs, typically from two machines or two builds (`samebits
// compare`): which cells (checkpoint x scenario x configuration) agree bit
// for bit and which do not; for each difference the first diverging step,
// the first diverging layer and op when both sides stored traces, and what
// most likely caused it, from what the two sides say about themselves.
//
// A cause is judged per differing cell, taking the first that applies:
//
//   code          the engine revisions differ, or the portable profile's
//                 fingerprints differ (the portable math is the project's
//                 own code);
//   compiler      the compilers or the compiler flags differ;
//   isa           the ISA the engine ran (isa_used) differs;
//   math-library  a libm-profile cell whose math libraries differ (name,
//                 version or fingerprint), with the same code;
//   architecture  the machines' architectures differ;
//   unexplained   none of these differ: the same build on the same kind of
//                 machine gave other bits, which breaks the contract.
//
// Where both sides of a difference have raw logit dumps (a dump file, or a
// bundle's rows or statistics: harness/exchange/bundle_dumps.h), the
// difference also says how far apart the logits of the first differing step
// are (logit_difference.h): the ULP statistics when both have the rows, the
// argmax and max |logit| of each side when one has only statistics.
//
// Cells that did not run on both sides (UNSUPPORTED, crashed, missing from
// one run) are "not compared", never counted as agreeing.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "harness/analysis/compare.h"
#include "harness/analysis/logit_difference.h"
#include "harness/analysis/results.h"

namespace samebits::harness {

enum class CompareCause : uint8_t {
  kWeights,
  kCode,
  kCompiler,
  kIsa,
  kMathLibrary,
  kDevice,
  kArchitecture,
  kUnexplained,
};

struct CompareCauseInfo {
  CompareCause cause;
  const char* name;   // "code", stable (the JSON report's diagnosis details)
  const char* title;  // "the code differs"
};

// Every cause, highest-ranked first: the headline names the first one found.
inline constexpr std::array<CompareCauseInfo, 8> kCompareCauses = {{
    {CompareCause::kWeights, "weights",
     "the weights differ (one checkpoint name, other contents): no code is to blame"},
    {CompareCause::kCode, "code", "the code differs"},
    {CompareCause::kCompiler, "compiler", "the compiler or its flags differ"},
    {CompareCause::kIsa, "isa", "the ISA differs"},
    {CompareCause::kMathLibrary, "math-library", "the math library differs (same code)"},
    {CompareCause::kDevice, "device",
     "the device differs: another GPU, driver or GPU library (same code)"},
    {CompareCause::kArchitecture, "architecture", "the architecture differs"},
    {CompareCause::kUnexplained, "unexplained",
     "nothing explains it (same code, compiler, ISA, math library, device and architecture)"},
}};

const CompareCauseInfo& CauseInfo(CompareCause cause);

enum class CellOutcome : uint8_t { kAgree, kDiffer, kNotCompared };

// One checkpoint x scenario x configuration, on both sides.
struct CellComparison {
  std::string checkpoint, scenario, config;
  CellOutcome outcome = CellOutcome::kNotCompared;
  std::optional<CellResult> a, b;  // each side's cell, when it has one
  std::string reason;              // why not compared
  // For a difference:
  std::optional<StepDifference> step;
  std::optional<TraceDifference> trace;  // when both sides stored traces
  // The logits of the first differing step, when both sides have a dump.
  std::optional<LogitDifference> logits;
  CompareCause cause = CompareCause::kUnexplained;
  std::string cause_detail;  // "revision 1234567 vs 89abcde"
  // For a batched configuration: its batch and where the scenario's
  // sequence sat at the differing step (batch.h), once when both sides say
  // the same, else "A: ...; B: ..."; empty when unbatched.
  std::string batch_place;
};

struct RunComparison {
  std::string label_a, label_b;  // how the two sides are named ("run 3", "x86.json")
  std::vector<CellComparison> cells;
  int agree = 0, differ = 0, not_compared = 0;
  std::array<int, kCompareCauses.size()> by_cause{};  // indexed like kCompareCauses
  // How the two sides differ, whether or not any cell does ("revisions:
  // ... vs ...", "architectures: ...").
  std::vector<std::string> context;
  std::string headline;

  // 0 every compared cell agrees; 1 a cell differs; 2 nothing was compared.
  int ExitCode() const;
};

struct CompareOptions {
  // Relative dump paths are resolved against this folder (the project
  // root; empty: the current directory).
  std::string dump_base_dir;
  // Read dump files (and a bundle's rows) for the logits of differing cells.
  bool read_dumps = true;
};

// Throws std::invalid_argument when `run` (named `label` in the message)
// holds two copies of one cell (checkpoint, scenario, configuration) whose
// contents differ: comparing either copy alone would drop the other
// silently. Identical copies are allowed (a cell counts once).
void RefuseDifferingCopies(const RunResult& run, const std::string& label);

// Returns how the weights two cells of one checkpoint name ran differ
// ("weights xxh3 ... vs ..."), or "" when they are the same or unknown on a
// side. Other weights are a cause of their own, ranked before any other:
// no code is to blame for them.
std::string WeightsDifference(const CellResult& x, const CellResult& y);

// Compares run `a` with run `b`, cell by cell. Throws std::invalid_argument
// when a side holds two differing copies of a cell (RefuseDifferingCopies).
RunComparison CompareRuns(const RunResult& a, const RunResult& b, const std::string& label_a,
                          const std::string& label_b, const CompareOptions& options = {});

// Returns one line for a person about one difference.
std::string DescribeCellDifference(const CellComparison& c);

// Returns the comparison as text for a terminal: the headline, the context,
// one line per difference and per cell not compared.
std::string FormatComparison(const RunComparison& comparison);

// Returns the comparison as a run the report exporters can write: each
// compared cell appears twice, as configurations "A" and "B" of the
// scenario "<scenario> <configuration>"; B is FAIL where it differs, both
// are UNSUPPORTED where they were not compared; the diagnosis holds the
// headline, the context and every difference, and its verdict (verdict.h)
// gives the same exit code as ExitCode().
RunResult ComparisonAsRun(const RunComparison& comparison, const RunResult& a);

}  // namespace samebits::harness
