// The math profiles (README.md, clause C8): where transcendentals come from.
// A `MathLibrary` is chosen once per process and passed explicitly to the
// code that needs it; it is never looked up through a global.
#pragma once

#include <string>
#include <string_view>

namespace samebits::numerics {

enum class MathProfile { kPortable, kLibm };

// Returns "portable" or "libm".
std::string_view MathProfileName(MathProfile profile);
// Returns true and sets `*out` when `name` is "portable" or "libm".
bool ParseMathProfile(std::string_view name, MathProfile* out);

// A table of f32 transcendentals. Function pointers, not virtual calls, so a
// kernel can hoist the pointer out of a loop.
struct MathLibrary {
  MathProfile profile;
  float (*exp)(float);
  float (*log)(float);
  float (*sin)(float);
  float (*cos)(float);
  float (*tanh)(float);
};

// Returns the library for `profile` (a static table; never null).
const MathLibrary& GetMathLibrary(MathProfile profile);

// SiLU per clause C3: x / (1 + exp(-x)).
inline float Silu(const MathLibrary& m, float x) {
  return x / (1.0f + m.exp(-x));
}

// A description of the math library this process would use for a profile:
// for `libm`, the C library's name and version (glibc's own version call
// where there is one) and a behavioural fingerprint, the XXH3-64 of the
// library's results for exp/log/sin/cos/tanh/pow over a fixed input set.
// For `portable` the same fields describe the engine's own implementation.
struct MathLibraryIdentity {
  std::string profile;      // "portable" or "libm"
  std::string name;         // "glibc", "samebits-portable", ...
  std::string version;      // "2.36", or the library's path when unknown
  std::string fingerprint;  // 16 lower-case hex digits
};
MathLibraryIdentity IdentifyMathLibrary(MathProfile profile);

}  // namespace samebits::numerics
