// Accuracy of the portable math profile (engine/numerics/README.md, clause C8) against the
// double-precision <cmath> functions rounded to float, over deterministic
// sweeps of at least 10^6 inputs per function, plus the IEEE special values.
// The measured maximum error is printed and recorded as a test property so
// it shows up in the log and in the XML report.
#include "engine/numerics/portable_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "engine/numerics/hash.h"
#include "tests/numerics/float_bits.h"

namespace samebits::numerics {
namespace {

using test_support::Bits;
using test_support::FromBits;

// Returns the float's position on a line where adjacent floats differ by 1
// (-0 and +0 both map to 0), so that the distance is an ulp count.
int64_t OrderedIndex(float f) {
  const uint32_t b = Bits(f);
  return (b >> 31) ? -static_cast<int64_t>(b & 0x7fffffffu) : static_cast<int64_t>(b);
}

// Returns the distance in ulps between two floats; 0 when both are NaN and
// a huge value when only one is.
int64_t UlpDistance(float a, float b) {
  if (a != a || b != b) return (a != a && b != b) ? 0 : (int64_t{1} << 40);
  return std::llabs(OrderedIndex(a) - OrderedIndex(b));
}

// Returns |got - exact| in units of the float ulp at the exact value (the
// subnormal ulp below 2^-126), for the printed fractional figure.
double UlpError(float got, double exact) {
  const float want = static_cast<float>(exact);
  if (std::isinf(want) || std::isinf(got) || exact != exact) return got == want ? 0.0 : INFINITY;
  int e;
  std::frexp(std::fabs(exact) < 0x1p-126 ? 0x1p-126 : exact, &e);
  const double ulp = std::ldexp(1.0, e - 24);
  return std::fabs(static_cast<double>(got) - exact) / ulp;
}

struct Sweep {
  std::string name;
  float (*portable)(float);
  double (*reference)(double);
  int64_t max_ulps_allowed;
};

struct Result {
  int64_t count = 0;
  int64_t max_ulps = 0;
  float worst_input = 0.0f;
  double max_fraction = 0.0;
  float worst_fraction_input = 0.0f;
};

Result Measure(const Sweep& s, const std::vector<float>& inputs) {
  Result r;
  for (float x : inputs) {
    const double exact = s.reference(static_cast<double>(x));
    const float want = static_cast<float>(exact);
    const float got = s.portable(x);
    const int64_t d = UlpDistance(got, want);
    if (d > r.max_ulps) {
      r.max_ulps = d;
      r.worst_input = x;
    }
    const double frac = UlpError(got, exact);
    if (frac > r.max_fraction) {
      r.max_fraction = frac;
      r.worst_fraction_input = x;
    }
    ++r.count;
  }
  return r;
}

void Report(const Sweep& s, const Result& r, const char* range) {
  std::cout << "[portable " << s.name << "] " << r.count << " inputs over " << range
            << ": max error " << r.max_ulps
            << " ulp vs the rounded double reference at x = " << std::hexfloat << r.worst_input
            << std::defaultfloat << " (" << r.worst_input << "); max " << r.max_fraction
            << " ulp vs the unrounded double at x = " << r.worst_fraction_input << "\n";
  ::testing::Test::RecordProperty(s.name + "_max_ulp", std::to_string(r.max_ulps));
  ::testing::Test::RecordProperty(s.name + "_max_ulp_fraction", std::to_string(r.max_fraction));
}

// Appends every `stride`-th float bit pattern in [lo_bits, hi_bits], with
// the given sign; an odd stride visits varied mantissas.
void AppendBitSweep(std::vector<float>* out, uint32_t lo_bits, uint32_t hi_bits, uint32_t stride,
                    bool negative) {
  for (uint64_t b = lo_bits; b <= hi_bits; b += stride) {
    out->push_back(FromBits(static_cast<uint32_t>(b) | (negative ? 0x80000000u : 0u)));
  }
}

// Appends `n` evenly spaced floats in [lo, hi].
void AppendLinear(std::vector<float>* out, double lo, double hi, int n) {
  for (int i = 0; i < n; ++i) out->push_back(static_cast<float>(lo + (hi - lo) * i / (n - 1)));
}

TEST(PortableMath, ExpSweep) {
  // Whole finite domain: every 2039th bit pattern of both signs up to |x| =
  // 104 (results from 1 down through subnormals to +0, and up to overflow),
  // and a dense linear sweep of [-104, 89] crossing both ends.
  std::vector<float> in;
  AppendBitSweep(&in, 0, Bits(104.0f), 2039, false);
  AppendBitSweep(&in, 0, Bits(104.0f), 2039, true);
  AppendLinear(&in, -104.0, 89.0, 1 << 19);
  const Sweep s{"exp", &PortableExp, [](double x) { return std::exp(x); }, 1};
  const Result r = Measure(s, in);
  Report(s, r, "|x| <= 104 by bit pattern and [-104, 89] linearly");
  EXPECT_GE(r.count, 1000000);
  EXPECT_LE(r.max_ulps, s.max_ulps_allowed) << "at x = " << std::hexfloat << r.worst_input;
}

TEST(PortableMath, LogSweep) {
  // Every 1021st positive finite float (subnormals included), and a dense
  // linear sweep of [0.5, 2] around the cancellation point 1.
  std::vector<float> in;
  AppendBitSweep(&in, 1, 0x7f7fffffu, 1021 * 2, false);
  AppendLinear(&in, 0.5, 2.0, 1 << 18);
  const Sweep s{"log", &PortableLog, [](double x) { return std::log(x); }, 1};
  const Result r = Measure(s, in);
  Report(s, r, "all positive floats by bit pattern and [0.5, 2] linearly");
  EXPECT_GE(r.count, 1000000);
  EXPECT_LE(r.max_ulps, s.max_ulps_allowed) << "at x = " << std::hexfloat << r.worst_input;
}

// pow, as RoPE divisors use it (base^(2i/d)), and over a wider grid of
// bases and exponents: within 1 ulp of the rounded double pow everywhere,
// and equal to it on the RoPE grid (the frequencies Llama 3.1's divisors
// come from).
TEST(PortableMath, PowSweep) {
  int64_t count = 0, max_ulps = 0, rope_differences = 0;
  for (const float base : {1e4f, 5e4f, 5e5f, 1e6f, 123456.0f, 1e7f}) {
    for (int d = 2; d <= 512; d += 2) {
      for (int i = 0; i < d; i += 2) {
        const float t = static_cast<float>(i) / static_cast<float>(d);
        const float want = static_cast<float>(std::pow(static_cast<double>(base), double{t}));
        rope_differences += !(Bits(PortablePow(base, t)) == Bits(want));
        ++count;
      }
    }
  }
  std::vector<float> bases, exponents;
  AppendLinear(&bases, 1e-3, 1e3, 1001);
  AppendBitSweep(&bases, 1, 0x7f7fffffu, 1 << 22, false);
  AppendLinear(&exponents, -40.0, 40.0, 1001);
  for (const float x : bases) {
    for (const float y : exponents) {
      const double exact = std::pow(static_cast<double>(x), static_cast<double>(y));
      if (exact > 0x1.fffffep127 || exact < 0x1p-126) continue;  // normal results only
      max_ulps = std::max(max_ulps, UlpDistance(PortablePow(x, y), static_cast<float>(exact)));
      ++count;
    }
  }
  std::cout << "[portable pow] " << count << " inputs: max error " << max_ulps
            << " ulp; RoPE grid differences " << rope_differences << "\n";
  EXPECT_EQ(rope_differences, 0);
  EXPECT_LE(max_ulps, 1);
  EXPECT_GE(count, 500000);
  EXPECT_TRUE(std::isnan(PortablePow(-1.0f, 0.5f)));
  EXPECT_TRUE(std::isnan(PortablePow(0.0f, 0.5f)));
  EXPECT_TRUE(std::isinf(PortablePow(1e30f, 2.0f)));
  EXPECT_EQ(PortablePow(1e-30f, 5.0f), 0.0f);
  EXPECT_EQ(PortablePow(5e5f, 0.0f), 1.0f);
}

// Inputs for sin and cos: the RoPE range [-1e5, 1e5] linearly, every float
// magnitude by bit pattern (huge arguments take the Payne-Hanek path), and
// the floats nearest to k * pi/2 for k < 2^18, where the reduced argument
// is smallest and cancellation is worst.
std::vector<float> TrigInputs() {
  std::vector<float> in;
  AppendLinear(&in, -1e5, 1e5, 1 << 19);
  AppendBitSweep(&in, 1, 0x7f7fffffu, 8191, false);
  AppendBitSweep(&in, 1, 0x7f7fffffu, 8191, true);
  for (int k = 1; k < (1 << 18); k += 1) {
    const float x = static_cast<float>(k * 1.5707963267948966);
    in.push_back(x);
    in.push_back(std::nextafter(x, 0.0f));
  }
  return in;
}

TEST(PortableMath, SinSweep) {
  const std::vector<float> in = TrigInputs();
  const Sweep s{"sin", &PortableSin, [](double x) { return std::sin(x); }, 2};
  const Result r = Measure(s, in);
  Report(s, r, "[-1e5, 1e5], all finite magnitudes, floats nearest k*pi/2");
  EXPECT_GE(r.count, 1000000);
  EXPECT_LE(r.max_ulps, s.max_ulps_allowed) << "at x = " << std::hexfloat << r.worst_input;
}

TEST(PortableMath, CosSweep) {
  const std::vector<float> in = TrigInputs();
  const Sweep s{"cos", &PortableCos, [](double x) { return std::cos(x); }, 2};
  const Result r = Measure(s, in);
  Report(s, r, "[-1e5, 1e5], all finite magnitudes, floats nearest k*pi/2");
  EXPECT_GE(r.count, 1000000);
  EXPECT_LE(r.max_ulps, s.max_ulps_allowed) << "at x = " << std::hexfloat << r.worst_input;
}

TEST(PortableMath, TanhSweep) {
  // Every 2039th bit pattern of both signs up to |x| = 12 (tiny arguments,
  // the expm1 switch at |x| = 0.175 and saturation at 10), and all float
  // magnitudes coarsely.
  std::vector<float> in;
  AppendBitSweep(&in, 0, Bits(12.0f), 2039, false);
  AppendBitSweep(&in, 0, Bits(12.0f), 2039, true);
  AppendBitSweep(&in, 0, 0x7f7fffffu, 65537, false);
  AppendLinear(&in, -1.0, 1.0, 1 << 18);
  const Sweep s{"tanh", &PortableTanh, [](double x) { return std::tanh(x); }, 2};
  const Result r = Measure(s, in);
  Report(s, r, "|x| <= 12 by bit pattern, [-1, 1] linearly, all magnitudes coarsely");
  EXPECT_GE(r.count, 1000000);
  EXPECT_LE(r.max_ulps, s.max_ulps_allowed) << "at x = " << std::hexfloat << r.worst_input;
}

// The measuring stick itself: adjacent floats are 1 apart, also across zero.
TEST(PortableMath, UlpDistanceCountsFloats) {
  EXPECT_EQ(UlpDistance(1.0f, std::nextafter(1.0f, 2.0f)), 1);
  EXPECT_EQ(UlpDistance(FromBits(1u), -FromBits(1u)), 2);
  EXPECT_EQ(UlpDistance(0.0f, -0.0f), 0);
  EXPECT_EQ(UlpDistance(1.0f, 2.0f), int64_t{1} << 23);
  EXPECT_GT(UlpDistance(1.0f, std::numeric_limits<float>::quiet_NaN()), int64_t{1} << 32);
  EXPECT_DOUBLE_EQ(UlpError(1.0f, 1.0 + 0x1p-24), 0.5);
}

// Pins the portable functions' bits (NaNs included) on every 4093rd float
// bit pattern, ~10^6 inputs per function. These digests were recorded from
// this implementation, not computed independently; they were found equal
// when built with GCC 12 (-O0, -O2), Clang 14 (-O2, -O3 -march=native) and
// for aarch64 with GCC 12 and Clang 14 (run under qemu-aarch64). A failure
// here on some platform means the portable profile is not portable there;
// a failure everywhere means the implementation changed: bump
// kPortableMathVersion and record the new digests.
TEST(PortableMath, OutputsArePinnedAcrossPlatforms) {
  struct Pinned {
    const char* name;
    float (*fn)(float);
    const char* digest;
  };
  const Pinned pinned[] = {{"exp", &PortableExp, "9b050ea02d183275"},
                           {"log", &PortableLog, "bd86992603da58c3"},
                           {"sin", &PortableSin, "396037e772620205"},
                           {"cos", &PortableCos, "5bdde4d503ce538b"},
                           {"tanh", &PortableTanh, "554d5015c2c74e9c"}};
  for (const Pinned& p : pinned) {
    std::vector<float> out;
    for (uint64_t b = 0; b <= 0xffffffffull; b += 4093)
      out.push_back(p.fn(FromBits(static_cast<uint32_t>(b))));
    EXPECT_EQ(Hex16(HashFloatsXxh3(out)), p.digest) << p.name;
  }
}

// Returns true when the two floats have identical bits.
bool SameBits(float a, float b) {
  return Bits(a) == Bits(b);
}

TEST(PortableMath, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float min_sub = FromBits(1u);
  // exp
  EXPECT_TRUE(SameBits(PortableExp(0.0f), 1.0f));
  EXPECT_TRUE(SameBits(PortableExp(-0.0f), 1.0f));
  EXPECT_TRUE(SameBits(PortableExp(inf), inf));
  EXPECT_TRUE(SameBits(PortableExp(-inf), 0.0f));
  EXPECT_TRUE(std::isnan(PortableExp(nan)));
  EXPECT_TRUE(SameBits(PortableExp(0x1.62e42ep6f),
                       std::nextafter(std::numeric_limits<float>::max(), 0.0f)) ||
              std::isfinite(PortableExp(0x1.62e42ep6f)));
  EXPECT_TRUE(SameBits(PortableExp(0x1.62e430p6f), inf));
  EXPECT_TRUE(SameBits(PortableExp(-110.0f), 0.0f));
  EXPECT_TRUE(SameBits(PortableExp(-103.0f), static_cast<float>(std::exp(-103.0))));  // subnormal
  EXPECT_GT(PortableExp(-103.0f), 0.0f);
  // log
  EXPECT_TRUE(SameBits(PortableLog(1.0f), 0.0f));
  EXPECT_TRUE(SameBits(PortableLog(0.0f), -inf));
  EXPECT_TRUE(SameBits(PortableLog(-0.0f), -inf));
  EXPECT_TRUE(SameBits(PortableLog(inf), inf));
  EXPECT_TRUE(std::isnan(PortableLog(-1.0f)));
  EXPECT_TRUE(std::isnan(PortableLog(-inf)));
  EXPECT_TRUE(std::isnan(PortableLog(-min_sub)));
  EXPECT_TRUE(std::isnan(PortableLog(nan)));
  EXPECT_TRUE(SameBits(PortableLog(min_sub), static_cast<float>(std::log(0x1p-149))));
  // The invalid-operation NaN is one fixed bit pattern on every CPU.
  EXPECT_EQ(Bits(PortableLog(-1.0f)), 0x7fc00000u);
  EXPECT_EQ(Bits(PortableSin(inf)), 0x7fc00000u);
  // sin / cos
  EXPECT_TRUE(SameBits(PortableSin(0.0f), 0.0f));
  EXPECT_TRUE(SameBits(PortableSin(-0.0f), -0.0f));
  EXPECT_TRUE(SameBits(PortableSin(min_sub), min_sub));
  EXPECT_TRUE(SameBits(PortableSin(-min_sub), -min_sub));
  EXPECT_TRUE(SameBits(PortableCos(0.0f), 1.0f));
  EXPECT_TRUE(SameBits(PortableCos(-0.0f), 1.0f));
  for (float x : {inf, -inf, nan}) {
    EXPECT_TRUE(std::isnan(PortableSin(x)));
    EXPECT_TRUE(std::isnan(PortableCos(x)));
  }
  EXPECT_TRUE(SameBits(
      PortableSin(std::numeric_limits<float>::max()),
      static_cast<float>(std::sin(static_cast<double>(std::numeric_limits<float>::max())))));
  // tanh
  EXPECT_TRUE(SameBits(PortableTanh(0.0f), 0.0f));
  EXPECT_TRUE(SameBits(PortableTanh(-0.0f), -0.0f));
  EXPECT_TRUE(SameBits(PortableTanh(inf), 1.0f));
  EXPECT_TRUE(SameBits(PortableTanh(-inf), -1.0f));
  EXPECT_TRUE(SameBits(PortableTanh(min_sub), min_sub));
  EXPECT_TRUE(SameBits(PortableTanh(-min_sub), -min_sub));
  EXPECT_TRUE(std::isnan(PortableTanh(nan)));
}

// A NaN argument comes back as a NaN of the same sign (quieted), as IEEE
// operations propagate it.
TEST(PortableMath, NanPropagation) {
  const float neg_nan = FromBits(0xffc00001u);
  for (auto fn : {&PortableExp, &PortableLog, &PortableSin, &PortableCos, &PortableTanh}) {
    const float r = fn(neg_nan);
    EXPECT_TRUE(std::isnan(r));
    EXPECT_TRUE(std::signbit(r));
  }
}

}  // namespace
}  // namespace samebits::numerics
