// Numeric profiles: the per-process choices that change an engine's bits by
// design, so that a configuration's cells are compared only with cells of
// the same choices and its references are a group of their own. Two axes
// make samebits-engine's profile (DESIGN.md section 1):
//
//   - `math` (--math): `portable`, the engine's own transcendentals, or
//     `libm`, the platform's;
//   - `quant_dot` (--quant-dot): `exact`, every quantized weight
//     dequantized to f32 under the contract, or `int8`, activations rounded
//     to int8 per block with integer block sums (engine/numerics/int8_dot.h).
//     On F32, F16 and BF16 weights both give the same bits.
//
// A profile's name is its math profile, followed by `-<quant_dot>` unless
// the dot product is exact: "portable", "libm", "portable-int8",
// "libm-int8". It is the part of a reference group's key before the
// architecture (references.h) and, after a '-', what a configuration's name
// ends with ("cpu-t2", "cpu-t2-libm", "cpu-t2-int8", "cpu-t2-libm-int8").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/analysis/results.h"

namespace samebits::harness {

inline constexpr const char* kPortableMath = "portable";
inline constexpr const char* kExactQuantDot = "exact";

struct NumericProfile {
  std::string math = kPortableMath;
  std::string quant_dot = kExactQuantDot;
  bool operator==(const NumericProfile&) const = default;
};

// Returns the profile `c` runs under.
NumericProfile ProfileOf(const Configuration& c);

// Returns the profile's name: "portable", "libm", "portable-int8",
// "libm-int8".
std::string ProfileName(const NumericProfile& p);

// Returns the suffix the profile's configuration names end with: "" for
// the default profile, else '-' and its name without a portable math:
// "-libm", "-int8", "-libm-int8".
std::string ProfileSuffix(const NumericProfile& p);

// Returns the flags of `samebits run`, `gate` and `reference generate` that
// select the profile, each after a space, the defaults left out: "",
// " --math libm", " --quant-dot int8", " --math libm --quant-dot int8".
std::string ProfileFlags(const NumericProfile& p);

// Returns the profile a reference group's name (ProfileName, then for a
// math other than portable '-' and the architecture) names: the math
// profile up to the first '-', then for portable the dot-product profile,
// else the dot-product profile up to the last '-' and the architecture
// after it, which `rest` receives when given ("x86_64" of
// "libm-int8-x86_64"). Which profiles exist is the engine profile's to say
// (its math and quant_dot axes), not this grammar's. Nothing for an empty
// text.
std::optional<NumericProfile> ParseProfileName(std::string_view text, std::string* rest = nullptr);

}  // namespace samebits::harness
