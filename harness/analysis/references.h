// The committed references (references/*.txt): the expected outputs, as
// text that reviews well in a diff. One file per group; a group is a
// numeric profile (numeric_profile.h: a math profile and a dot-product
// profile for quantized weights) on a platform:
//
//   - `portable`: one group for every architecture, because the numeric
//     contract promises the portable profile the same bits everywhere; a
//     difference on any machine is a bug, not a platform trait;
//   - `libm-<arch>` (libm-x86_64, libm-aarch64): the system math library's
//     results, per architecture. The C library is not part of the key but is
//     named on the group's `math-library` line, so a machine with another
//     libm is told "this environment's math library rounds differently"
//     (naming both) instead of "no reference";
//   - `portable-int8` and `libm-int8-<arch>`: the same under --quant-dot
//     int8. The int8 profile is as portable as the exact one, so its
//     portable group, too, serves every architecture.
//
// A file:
//
//   # comments
//   format 1
//   group portable
//   math-library samebits-portable 1 0f3c2a1b4d5e6f70
//   revision 5e0558ab7794aeeccb52e07cb71cb11cd104e83e
//   synthetic:tiny classic 0 prefill 11 17 <fnv1a64> <xxh3_64>
//
// Data lines are `checkpoint scenario step kind position token fnv1a64
// xxh3_64`, sorted by checkpoint, scenario and step. Fields are separated by
// one space; a space, a tab, a newline or a `%` inside a field is written as
// %20, %09, %0A, %25. `revision` is the engine build the lines were
// generated with (a `git bisect` start point), `-dirty` when its tree was.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "harness/analysis/numeric_profile.h"
#include "harness/analysis/results.h"

namespace samebits::harness {

// A reference file that cannot be read or parsed; the message names the
// file and the line.
class ReferenceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ReferenceLine {
  std::string checkpoint;
  std::string scenario;
  int step = 0;
  std::string kind;
  int position = 0;
  int token = 0;
  uint64_t fnv1a64 = 0;
  uint64_t xxh3_64 = 0;
  bool operator==(const ReferenceLine&) const = default;
};

struct ReferenceGroup {
  std::string key;  // "portable", "libm-x86_64", "portable-int8", "libm-int8-x86_64"
  // `math.profile` and `quant_dot` are read from the key (its profile part).
  MathLibraryInfo math;
  std::string quant_dot = kExactQuantDot;
  std::string revision;
  std::vector<ReferenceLine> lines;

  // Returns whether the group holds outputs for this pair.
  bool Has(const std::string& checkpoint, const std::string& scenario) const;
  // Returns the pair's outputs as steps (input_token, argmax, nan, inf 0).
  std::vector<StepRecord> Steps(const std::string& checkpoint, const std::string& scenario) const;
  bool operator==(const ReferenceGroup&) const = default;
};

inline constexpr int kReferenceFormat = 1;

// Returns the group key for a numeric profile on an architecture, of an
// engine: its ProfileName, followed by `-<arch>` unless the math profile is
// portable: "portable", "libm-x86_64", "portable-int8", "libm-int8-x86_64"
// for samebits-engine (`engine` empty or "samebits"); "ENGINE/portable" for
// another engine, whose references live in a folder of their own
// (references/ENGINE/portable.txt).
std::string ReferenceGroupKey(const NumericProfile& profile, const std::string& arch,
                              const std::string& engine = "");

// A group key read back into its parts.
struct ReferenceGroupKeyParts {
  std::string engine;  // "" for samebits-engine
  NumericProfile profile;
  std::string arch;  // "" for a portable group
};

// Returns the parts ReferenceGroupKey made `key` of.
ReferenceGroupKeyParts ParseReferenceGroupKey(const std::string& key);

// Returns the file name of a group ("portable.txt").
std::string ReferenceFileName(const std::string& key);

// Returns the group in `text`. `file` names it in errors. Throws
// ReferenceError ("references/portable.txt:12: ...").
ReferenceGroup ParseReferenceGroup(std::string_view text, const std::string& file);

// Returns the group as file text, lines sorted.
std::string FormatReferenceGroup(const ReferenceGroup& group);

// Returns the group `key` from the folder `dir`, or nothing when its file
// does not exist. Throws ReferenceError when it exists but is unreadable or
// malformed.
std::optional<ReferenceGroup> LoadReferenceGroup(const std::string& dir, const std::string& key);

// Writes the group to `dir` (creating it), atomically (a temporary file
// renamed over the old). Throws ReferenceError.
void SaveReferenceGroup(const std::string& dir, const ReferenceGroup& group);

// Returns a step sequence with the fields references do not record
// (input token, argmax, NaN and Inf counts) cleared, for comparison.
std::vector<StepRecord> AsReferenceSteps(const std::vector<StepRecord>& steps);

}  // namespace samebits::harness
