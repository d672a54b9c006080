#include "engine/numerics/portable_math.h"

#include <bit>
#include <cfloat>
#include <cstdint>

#include "engine/numerics/portable_exp.h"

// Every function below relies on double and float operations being rounded
// to their own precision. x87 extended-precision evaluation would change
// bits, so refuse to build where it is the default.
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
#error "samebits' portable math needs FLT_EVAL_METHOD == 0 (SSE2 or better, no x87)"
#endif

// The build passes -ffp-contract=off everywhere; this pragma keeps Clang from
// fusing a*b+c here even if this file is ever compiled without it (GCC
// ignores the pragma in C++ and relies on the flag).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace samebits::numerics {
namespace {

using portable_exp::k32OverLn2;
using portable_exp::kExp2Table;
using portable_exp::kLn2Over32Hi;
using portable_exp::kLn2Over32Lo;

// The NaN returned for an invalid operation (log of a negative number, sin
// of an infinity). Written as a constant because the NaN that arithmetic
// makes (0/0, inf - inf) has a different sign bit on x86 than on ARM. A NaN
// argument is returned as `x + x` instead, which quiets it and keeps its
// payload on both.
float InvalidNan() {
  return std::bit_cast<float>(0x7fc00000u);
}

// Returns 2^k as a double for k in the normal range [-1022, 1023].
double Pow2(int k) {
  return std::bit_cast<double>(static_cast<uint64_t>(k + 1023) << 52);
}

// Returns `v` rounded to the nearest integer (ties to even) as a double, for
// |v| < 2^51: adding and subtracting 1.5 * 2^52 leaves no fraction bits.
double RoundToIntegral(double v) {
  constexpr double kShifter = 0x1.8p52;
  const double shifted = v + kShifter;
  return shifted - kShifter;
}

constexpr double kLn2 = 0x1.62e42fefa39efp-1;

// Returns e^r - 1 for |r| <= ~0.36 by its Taylor series through r^14; the
// first omitted term is below 2^-60 relative to the result.
double Expm1Taylor(double r) {
  double p = 1.0 / 87178291200.0;  // 1/14!
  p = p * r + 1.0 / 6227020800.0;  // 1/13!
  p = p * r + 1.0 / 479001600.0;   // 1/12!
  p = p * r + 1.0 / 39916800.0;    // 1/11!
  p = p * r + 1.0 / 3628800.0;     // 1/10!
  p = p * r + 1.0 / 362880.0;      // 1/9!
  p = p * r + 1.0 / 40320.0;       // 1/8!
  p = p * r + 1.0 / 5040.0;        // 1/7!
  p = p * r + 1.0 / 720.0;         // 1/6!
  p = p * r + 1.0 / 120.0;         // 1/5!
  p = p * r + 1.0 / 24.0;          // 1/4!
  p = p * r + 1.0 / 6.0;           // 1/3!
  p = p * r + 0.5;                 // 1/2!
  p = p * r + 1.0;
  return p * r;
}

// Returns e^t in double for |t| < ~700 with a relative error of about
// 2^-52: t = (32 m + j) ln2/32 + r with |r| <= ln2/64, so
// e^t = 2^m * 2^(j/32) * (1 + expm1(r)), expm1 by its Taylor series through
// r^6 (the first omitted term is below 2^-58 relative).
double ExpDouble(double t) {
  const double kd = RoundToIntegral(t * k32OverLn2);
  const double r = (t - kd * kLn2Over32Hi) - kd * kLn2Over32Lo;
  double p = 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r * r + r;
  const int64_t k = static_cast<int64_t>(kd);
  const int64_t j = k & 31;
  const int m = static_cast<int>((k - j) / 32);
  const double table = kExp2Table[j];
  return (table + table * p) * Pow2(m);
}

// Returns log(m) for m in [sqrt(2)/2, sqrt(2)] as 2 atanh(s), s = (m-1)/(m+1),
// |s| <= 0.1716, by the series 2 (s + s^3/3 + ... + s^23/23); the first
// omitted term is below 2^-60 relative to the result.
double LogReduced(double m) {
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double s2 = s * s;
  double p = 1.0 / 23.0;
  p = p * s2 + 1.0 / 21.0;
  p = p * s2 + 1.0 / 19.0;
  p = p * s2 + 1.0 / 17.0;
  p = p * s2 + 1.0 / 15.0;
  p = p * s2 + 1.0 / 13.0;
  p = p * s2 + 1.0 / 11.0;
  p = p * s2 + 1.0 / 9.0;
  p = p * s2 + 1.0 / 7.0;
  p = p * s2 + 1.0 / 5.0;
  p = p * s2 + 1.0 / 3.0;
  // 2s + 2s * s2 * p keeps the leading term exact-ish for tiny s.
  return 2.0 * s + (2.0 * s) * (s2 * p);
}

// Returns sin(r) for |r| <= ~0.79 by its Taylor series through r^17.
double SinReduced(double r) {
  const double r2 = r * r;
  double p = -1.0 / 355687428096000.0;  // -1/17!
  p = p * r2 + 1.0 / 1307674368000.0;   // 1/15!
  p = p * r2 - 1.0 / 6227020800.0;      // -1/13!
  p = p * r2 + 1.0 / 39916800.0;        // 1/11!
  p = p * r2 - 1.0 / 362880.0;          // -1/9!
  p = p * r2 + 1.0 / 5040.0;            // 1/7!
  p = p * r2 - 1.0 / 120.0;             // -1/5!
  p = p * r2 + 1.0 / 6.0;               // 1/3!
  return r - r * (r2 * p);
}

// Returns cos(r) for |r| <= ~0.79 by its Taylor series through r^18.
double CosReduced(double r) {
  const double r2 = r * r;
  double p = -1.0 / 6402373705728000.0;  // -1/18!
  p = p * r2 + 1.0 / 20922789888000.0;   // 1/16!
  p = p * r2 - 1.0 / 87178291200.0;      // -1/14!
  p = p * r2 + 1.0 / 479001600.0;        // 1/12!
  p = p * r2 - 1.0 / 3628800.0;          // -1/10!
  p = p * r2 + 1.0 / 40320.0;            // 1/8!
  p = p * r2 - 1.0 / 720.0;              // -1/6!
  p = p * r2 + 1.0 / 24.0;               // 1/4!
  p = p * r2 - 0.5;                      // -1/2!
  return 1.0 + r2 * p;
}

// pi/2 in three parts for the Cody-Waite reduction. kPio2_1 has 31
// significant bits and kPio2_2 32, so k * kPio2_1 and k * kPio2_2 are exact
// for k < 2^21, and x - k * kPio2_1 is exact for a float x (both are
// multiples of 2^-30 and the difference is below 1).
constexpr double kPio2_1 = 0x1.921fb544p+0;
constexpr double kPio2_2 = 0x1.0b4611a6p-34;
constexpr double kPio2_3 = 0x1.3198a2e037073p-69;
constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
constexpr double kPio2 = 0x1.921fb54442d18p+0;

// The first 256 bits of the fraction of 2/pi, most significant first, for
// the Payne-Hanek reduction of large arguments.
constexpr uint32_t kTwoOverPiBits[8] = {0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u,
                                        0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u};

// Returns bit `i` (1 = the first bit after the binary point) of 2/pi; bits
// at i <= 0 are zero because 2/pi < 1.
unsigned TwoOverPiBit(int i) {
  if (i <= 0) return 0;
  const int word = (i - 1) / 32;
  const int shift = 31 - (i - 1) % 32;
  return (kTwoOverPiBits[word] >> shift) & 1u;
}

// A reduced argument: x = quadrant * pi/2 + r, |r| <= ~pi/4.
struct Reduced {
  double r;
  unsigned quadrant;  // mod 4
};

// Reduces |x| < 2^21 by the three-part Cody-Waite scheme.
Reduced ReduceCodyWaite(float x) {
  const double xd = x;
  const double kd = RoundToIntegral(xd * kTwoOverPi);
  const double r1 = xd - kd * kPio2_1;  // exact
  const double r2 = r1 - kd * kPio2_2;  // exact when small
  const double r = r2 - kd * kPio2_3;
  const int64_t k = static_cast<int64_t>(kd);
  return {r, static_cast<unsigned>(k & 3)};
}

// Reduces a finite |x| >= 2^21 exactly (Payne-Hanek): x = m * 2^e with an
// integer m < 2^24 and e >= -2, so only the bits of 2/pi of weight 2^1 and
// below matter modulo 4. 96 of them times m give x * 2/pi modulo 4 in fixed
// point with 94 fraction bits; the truncated tail adds less than 2^-70.
Reduced ReducePayneHanek(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x) & 0x7fffffffu;
  const int e = static_cast<int>(u >> 23) - 150;
  const uint64_t m = (u & 0x7fffffu) | 0x800000u;
  // Window: bits e-1 .. e+94 of 2/pi; bit e-1 has weight 2^1 in x * 2/pi / m * 2^-e.
  unsigned __int128 window = 0;
  for (int j = 0; j < 96; ++j) window = (window << 1) | TwoOverPiBit(e - 1 + j);
  const unsigned __int128 product = window * m;
  const unsigned __int128 mask94 = (static_cast<unsigned __int128>(1) << 94) - 1;
  unsigned quadrant = static_cast<unsigned>(product >> 94) & 3u;
  // The top 64 bits of the 94-bit fraction, in units of 2^-64 quadrants;
  // round to the nearest quadrant so the fraction is in [-1/2, 1/2).
  const uint64_t frac64 = static_cast<uint64_t>((product & mask94) >> 30);
  int64_t signed_frac = static_cast<int64_t>(frac64);  // two's complement wrap is intended
  if (frac64 >= (uint64_t{1} << 63)) quadrant = (quadrant + 1) & 3u;
  const double f = static_cast<double>(signed_frac) * 0x1p-64;
  double r = f * kPio2;
  unsigned q = quadrant;
  if (x < 0) {
    r = -r;
    q = (4u - q) & 3u;
  }
  return {r, q};
}

Reduced Reduce(float x) {
  const float ax = x < 0 ? -x : x;
  if (ax < kPortableTrigExactLimit) return ReduceCodyWaite(x);
  return ReducePayneHanek(x);
}

bool IsInf(float x) {
  return (std::bit_cast<uint32_t>(x) & 0x7fffffffu) == 0x7f800000u;
}

}  // namespace

float PortableExp(float x) {
  if (x != x) return x + x;
  // 0x1.62e42ep6 is the largest float whose e^x rounds to a finite float;
  // returning infinity above it also keeps the final conversion in range.
  if (x > portable_exp::kLargestFinite) return std::bit_cast<float>(0x7f800000u);
  if (x < portable_exp::kSmallestNonzero) return 0.0f;  // e^-104 < 2^-150: rounds to +0
  // In [-104, 88.72] the double result stays far inside double's range; the
  // final conversion rounds once, into subnormals where needed.
  return static_cast<float>(ExpDouble(x));
}

namespace {

// Returns log(x) in double for a positive normal or subnormal float x
// (the double that PortableLog rounds), about 2^-52 relative.
double LogPositive(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  int e = 0;
  if (u < 0x00800000u) {  // subnormal: scale by 2^23 exactly
    u = std::bit_cast<uint32_t>(x * 0x1p23f);
    e = -23;
  }
  e += static_cast<int>(u >> 23) - 127;
  uint32_t mant = (u & 0x7fffffu) | 0x3f800000u;  // m in [1, 2)
  // Keep m in [sqrt(2)/2, sqrt(2)] so that |s| stays small; 0x3504f3 is the
  // mantissa of sqrt(2).
  if ((u & 0x7fffffu) > 0x3504f3u) {
    mant -= 0x00800000u;  // m / 2
    e += 1;
  }
  const double m = std::bit_cast<float>(mant);
  return static_cast<double>(e) * kLn2 + LogReduced(m);
}

}  // namespace

float PortableLog(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  if (x != x) return x + x;
  if (x == 0.0f) return -std::bit_cast<float>(0x7f800000u);
  if (u >> 31) return InvalidNan();  // negative: invalid
  if (u == 0x7f800000u) return x;
  return static_cast<float>(LogPositive(x));
}

float PortablePow(float x, float y) {
  if (!(x > 0.0f) || IsInf(x) || y != y || IsInf(y)) return InvalidNan();
  const double t = static_cast<double>(y) * LogPositive(x);
  // Beyond these e^t overflows float or rounds to +0 (and ExpDouble's
  // reduction needs |t| < ~700).
  if (t > 89.0) return std::bit_cast<float>(0x7f800000u);
  if (t < -104.0) return 0.0f;
  const double r = ExpDouble(t);
  // From halfway between FLT_MAX and 2^128 on, float rounds to infinity
  // (a conversion out of float's range would be undefined).
  if (r >= 0x1.ffffffp127) return std::bit_cast<float>(0x7f800000u);
  return static_cast<float>(r);
}

float PortableSin(float x) {
  if (x != x) return x + x;
  if (IsInf(x)) return InvalidNan();
  if (x == 0.0f) return x;  // keeps the sign of zero
  const Reduced red = Reduce(x);
  double v;
  switch (red.quadrant) {
    case 0:
      v = SinReduced(red.r);
      break;
    case 1:
      v = CosReduced(red.r);
      break;
    case 2:
      v = -SinReduced(red.r);
      break;
    default:
      v = -CosReduced(red.r);
      break;
  }
  return static_cast<float>(v);
}

float PortableCos(float x) {
  if (x != x) return x + x;
  if (IsInf(x)) return InvalidNan();
  const Reduced red = Reduce(x);
  double v;
  switch (red.quadrant) {
    case 0:
      v = CosReduced(red.r);
      break;
    case 1:
      v = -SinReduced(red.r);
      break;
    case 2:
      v = -CosReduced(red.r);
      break;
    default:
      v = SinReduced(red.r);
      break;
  }
  return static_cast<float>(v);
}

float PortableTanh(float x) {
  if (x != x) return x + x;
  if (x == 0.0f) return x;
  const bool negative = x < 0;
  const float ax = negative ? -x : x;
  double v;
  if (ax > 10.0f) {
    // 1 - tanh(10) < 2^-28, below half an ulp of 1: the float result is 1.
    v = 1.0;
  } else {
    // tanh(a) = expm1(2a) / (expm1(2a) + 2); for 2a > 0.35 e^(2a) - 1 >= 0.42,
    // so the subtraction loses at most two bits of the double result.
    const double t = 2.0 * static_cast<double>(ax);
    const double em1 = t <= 0.35 ? Expm1Taylor(t) : ExpDouble(t) - 1.0;
    v = em1 / (em1 + 2.0);
  }
  return static_cast<float>(negative ? -v : v);
}

}  // namespace samebits::numerics
