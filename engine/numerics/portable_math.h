// The `portable` math profile (README.md, clause C8): f32 exp, log, sin, cos
// and tanh built only from IEEE basic operations (+, -, *, /, conversions)
// on float and double, so every IEEE platform and compiler gives the same
// bits. No libm function is called.
//
// How: each function works in double precision (argument reduction with
// split constants, then a Taylor polynomial evaluated by Horner's rule with
// plain multiplications and additions) and rounds once to float at the end.
// The double result is accurate to a few units in 2^-53, so the float result
// is the correctly rounded one except very close to a rounding boundary,
// where it is one ulp off at most. Requirements: IEEE binary32/binary64
// arithmetic in round-to-nearest-even evaluated at its own precision
// (FLT_EVAL_METHOD == 0, i.e. no x87 extended precision) and no implicit
// fma contraction (-ffp-contract=off). The .cc file checks FLT_EVAL_METHOD.
// The large-argument trig reduction uses `unsigned __int128` (GCC and Clang
// on 64-bit targets).
//
// Measured error against the double-precision <cmath> function rounded to
// float is in tests/numerics/portable_math_test.cc (target: <= 1 ulp for
// exp and log, <= 2 ulp for sin, cos and tanh).
#pragma once

namespace samebits::numerics {

// Bumped whenever any function below could return different bits, so that
// results recorded under an older implementation are not mistaken for
// comparable ones. Reported as the portable profile's "version".
inline constexpr const char* kPortableMathVersion = "1";

// Returns e^x. Whole float domain: overflows to +inf above ~88.72, rounds
// into subnormals and then to +0 below ~-103.97; exp(NaN) = NaN,
// exp(-inf) = +0, exp(+inf) = +inf, exp(-0) = 1.
float PortableExp(float x);

// Returns the natural logarithm of x. All positive floats, subnormals
// included; log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf,
// log(NaN) = NaN, log(1) = +0.
float PortableLog(float x);

// Returns x^y for a positive finite x and a finite y, as e^(y log x)
// computed in double and rounded once: the correctly rounded float except
// within about 2^-50 relative of a rounding boundary. Any other argument
// gives NaN (the engine needs no other). Used where a format derives
// weights from a power (Llama 3.1's RoPE divisors from rope_scaling).
float PortablePow(float x, float y);

// sin and cos are accurate for every finite float. Arguments below this
// bound are reduced modulo pi/2 by a three-part Cody-Waite scheme in double
// (exact for quotients below 2^21); larger ones by a Payne-Hanek reduction
// with 256 bits of 2/pi in integer arithmetic.
inline constexpr float kPortableTrigExactLimit = 2097152.0f;  // 2^21

// Returns sin(x); sin(+-0) = +-0, sin(+-inf) = NaN, sin(NaN) = NaN.
float PortableSin(float x);

// Returns cos(x); cos(+-inf) = NaN, cos(NaN) = NaN.
float PortableCos(float x);

// Returns tanh(x) over all floats (saturating to +-1 for |x| > 10);
// tanh(+-0) = +-0, tanh(+-inf) = +-1, tanh(NaN) = NaN.
float PortableTanh(float x);

}  // namespace samebits::numerics
