// BF16 and F16 conversions (half.h): exact widening for all 65536 bit
// patterns, and round-to-nearest-even narrowing checked against an
// independent reference that rounds in double arithmetic.
#include "engine/numerics/half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "tests/numerics/float_bits.h"

namespace samebits::numerics {
namespace {

using test_support::Bits;
using test_support::FromBits;

// A binary format with `precision` significand bits (hidden bit included),
// smallest normal exponent `emin` and largest exponent `emax`.
struct Format {
  int precision, emin, emax;
};
constexpr Format kBF16Format{8, -126, 127};
constexpr Format kF16Format{11, -14, 15};

// Returns f rounded to the format, to nearest with ties to even, computed
// in double: pick the quantum of f's binade (or of the subnormal range),
// round |f| / quantum to an integer with nearbyint (ties to even in the
// default rounding mode) and scale back; at or above 2^(emax+1) it is inf.
double ReferenceRound(float f, Format fmt) {
  const double a = std::fabs(static_cast<double>(f));
  if (std::isinf(a)) return f;
  int exp2 = 0;
  std::frexp(a, &exp2);  // a = m * 2^exp2, m in [0.5, 1)
  int e = exp2 - 1;
  if (a == 0.0 || e < fmt.emin) e = fmt.emin;
  const double quantum = std::ldexp(1.0, e - (fmt.precision - 1));
  double r = std::nearbyint(a / quantum) * quantum;
  if (r >= std::ldexp(1.0, fmt.emax + 1)) r = std::numeric_limits<double>::infinity();
  return std::signbit(f) ? -r : r;
}

void ExpectMatchesReference(float f) {
  const double want_bf16 = ReferenceRound(f, kBF16Format);
  const float got_bf16 = ToFloat(ToBF16(f));
  EXPECT_EQ(static_cast<double>(got_bf16), want_bf16) << std::hexfloat << "ToBF16(" << f << ")";
  EXPECT_EQ(std::signbit(got_bf16), std::signbit(want_bf16)) << std::hexfloat << f;
  const double want_f16 = ReferenceRound(f, kF16Format);
  const float got_f16 = ToFloat(ToF16(f));
  EXPECT_EQ(static_cast<double>(got_f16), want_f16) << std::hexfloat << "ToF16(" << f << ")";
  EXPECT_EQ(std::signbit(got_f16), std::signbit(want_f16)) << std::hexfloat << f;
}

TEST(Half, AllBF16RoundTrip) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = ToFloat(BF16{static_cast<uint16_t>(b)});
    const bool is_nan = (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0;
    EXPECT_EQ(std::isnan(f), is_nan) << b;
    EXPECT_EQ(Bits(f) >> 16, b) << b;  // widening is exact, bit for bit
    const uint16_t back = ToBF16(f).bits;
    if (is_nan) {
      EXPECT_TRUE(std::isnan(ToFloat(BF16{back}))) << b;
      EXPECT_EQ(back & 0x8000u, b & 0x8000u) << b;
    } else {
      EXPECT_EQ(back, b) << b;
    }
  }
}

TEST(Half, AllF16RoundTrip) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = ToFloat(F16{static_cast<uint16_t>(b)});
    const bool is_nan = (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) != 0;
    EXPECT_EQ(std::isnan(f), is_nan) << b;
    if (!is_nan) {
      // Independent value check: sign * mantissa * 2^exponent in double.
      const int e = (b >> 10) & 0x1f;
      const int m = b & 0x3ff;
      double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? INFINITY : std::ldexp(1024 + m, e - 25);
      if (b & 0x8000u) v = -v;
      EXPECT_EQ(static_cast<double>(f), v) << b;
      EXPECT_EQ(std::signbit(f), (b & 0x8000u) != 0) << b;
    }
    const uint16_t back = ToF16(f).bits;
    if (is_nan) {
      EXPECT_TRUE(std::isnan(ToFloat(F16{back}))) << b;
      EXPECT_EQ(back & 0x8000u, b & 0x8000u) << b;
    } else {
      EXPECT_EQ(back, b) << b;
    }
  }
}

TEST(Half, RoundingMatchesReferenceOnASweep) {
  // Every 4099th bit pattern of all non-NaN floats, both signs (~2 * 10^6).
  for (uint64_t b = 0; b <= 0x7f800000u; b += 4099) {
    ExpectMatchesReference(FromBits(static_cast<uint32_t>(b)));
    ExpectMatchesReference(FromBits(static_cast<uint32_t>(b) | 0x80000000u));
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(Half, RoundingTiesOverflowAndSubnormals) {
  // BF16 ties: low 16 bits exactly 0x8000, odd and even upper halves, and
  // one above / below the tie.
  for (uint32_t hi : {0x3f80u, 0x3f81u, 0x4049u, 0x7f7fu, 0x0000u, 0x0001u, 0x007fu}) {
    for (uint32_t lo : {0x7fffu, 0x8000u, 0x8001u}) {
      ExpectMatchesReference(FromBits(hi << 16 | lo));
      ExpectMatchesReference(FromBits(0x80000000u | hi << 16 | lo));
    }
  }
  EXPECT_EQ(ToBF16(FromBits(0x3f808000u)).bits, 0x3f80u);  // tie -> even (down)
  EXPECT_EQ(ToBF16(FromBits(0x3f818000u)).bits, 0x3f82u);  // tie -> even (up)
  EXPECT_EQ(ToBF16(FromBits(0x7f7f8000u)).bits, 0x7f80u);  // tie at the top -> inf
  EXPECT_EQ(ToBF16(FromBits(0x7f7f7fffu)).bits, 0x7f7fu);
  // F16: 65504 is the largest finite; 65520 is the tie that overflows.
  for (float f : {65504.0f, 65519.0f, 65519.996f, 65520.0f, 65536.0f, 1e10f,
                  // Smallest subnormal 2^-24; half of it 2^-25 is a tie to 0.
                  0x1p-24f, 0x1p-25f, 0x1.000002p-25f, 0x1.8p-24f, 0x1.8p-23f, 0x1p-26f,
                  // Largest subnormal, smallest normal, ties across them.
                  0x1.ff8p-15f, 0x1.ffcp-15f, 0x1p-14f, 0x1.001p-14f, 0x1.003p-14f,
                  // Normal ties: 1 + 2^-11 (down) and 1 + 3 * 2^-11 (up).
                  1.0f + 0x1p-11f, 1.0f + 0x1.8p-10f, 2049.0f, 2051.0f}) {
    ExpectMatchesReference(f);
    ExpectMatchesReference(-f);
  }
  EXPECT_EQ(ToF16(65519.0f).bits, 0x7bffu);
  EXPECT_EQ(ToF16(65520.0f).bits, 0x7c00u);
  EXPECT_EQ(ToF16(0x1p-25f).bits, 0x0000u);
  EXPECT_EQ(ToF16(0x1.000002p-25f).bits, 0x0001u);
  EXPECT_EQ(ToF16(0x1.8p-24f).bits, 0x0002u);  // 1.5 quanta: tie -> even 2
  EXPECT_EQ(ToF16(-0.0f).bits, 0x8000u);
  EXPECT_EQ(ToF16(-std::numeric_limits<float>::infinity()).bits, 0xfc00u);
  EXPECT_TRUE(std::isnan(ToFloat(ToF16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(ToFloat(ToBF16(FromBits(0x7f800001u)))));  // signalling NaN stays NaN
  EXPECT_TRUE(std::isnan(ToFloat(ToF16(FromBits(0x7f800001u)))));
}

}  // namespace
}  // namespace samebits::numerics
