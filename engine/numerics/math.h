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

// GELU, tanh form, per clause C3 (ggml's and Gemma's constants):
// (0.5 x) (1 + tanh((c x) (1 + (a x) x))), c = sqrt(2 / pi), a = 0.044715,
// each product and sum one f32 operation, left to right as written.
inline float GeluTanh(const MathLibrary& m, float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  constexpr float kCoefA = 0.044715f;
  const float inner = (kSqrt2OverPi * x) * (1.0f + (kCoefA * x) * x);
  return (0.5f * x) * (1.0f + m.tanh(inner));
}

// Soft-capping per clause C3: tanh(x * inv_cap) * cap, with inv_cap the
// f32 `1.0f / cap` computed once by the caller.
inline float SoftCap(const MathLibrary& m, float x, float cap, float inv_cap) {
  return m.tanh(x * inv_cap) * cap;
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
