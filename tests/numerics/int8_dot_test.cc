// The integer profile's definition (engine/numerics/README.md, C12), one
// test per clause: how activations are quantized (C12.1), the integer form
// of every weight type and its exact group sums (C12.2), and the f32 lane
// order the block sums are accumulated in (C12.3).
#include "engine/numerics/int8_dot.h"

#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/numerics/half.h"
#include "engine/numerics/lanes.h"
#include "engine/numerics/quant_blocks.h"
#include "engine/numerics/splitmix.h"
#include "tests/numerics/float_bits.h"

namespace samebits::numerics {
namespace {

using test_support::Bits;

std::vector<float> RandomValues(int64_t n, uint64_t seed, float scale = 1.0f) {
  SplitMix64Stream rng(seed);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) {
    v = scale * (static_cast<float>(rng.Next() >> 40) / static_cast<float>(1 << 24) * 2.0f - 1.0f);
  }
  return x;
}

struct Quantized {
  std::vector<int8_t> q;
  std::vector<float> d;
  std::vector<int16_t> sums;
};

Quantized Quantize(QuantType type, const std::vector<float>& x) {
  const int64_t k = static_cast<int64_t>(x.size());
  Quantized out;
  out.q.resize(x.size());
  out.d.resize(static_cast<size_t>(k / ActivationBlockElements(type)));
  out.sums.resize(static_cast<size_t>(k / kActivationSumSpan));
  QuantizeActivations(type, x.data(), k, out.q.data(), out.d.data(), out.sums.data());
  return out;
}

// C12.1: blocks of 32 take ggml's q8_0 rule (its SIMD quantizers'): each
// quant is x * (127 / amax) rounded half to even, and d is amax / 127
// rounded to the nearest F16.
TEST(Int8Activations, BlocksOf32KeepAnF16Scale) {
  const std::vector<float> x = RandomValues(int64_t{32} * 5, 1, 3.0f);
  const Quantized a = Quantize(QuantType::kQ8_0, x);
  for (int b = 0; b < 5; ++b) {
    float amax = 0.0f;
    for (int i = 0; i < 32; ++i) amax = std::fmax(amax, std::fabs(x[32 * b + i]));
    EXPECT_EQ(Bits(a.d[b]), Bits(ToFloat(ToF16(amax / 127.0f)))) << "block " << b;
    const float id = 127.0f / amax;
    for (int i = 0; i < 32; ++i) {
      EXPECT_EQ(a.q[32 * b + i], static_cast<int>(std::nearbyint(x[32 * b + i] * id)));
    }
  }
}

// C12.1: blocks of 256 (the k-quants' activations) take ggml's q8_K rule:
// the same quants, and d = 1 / (127 / amax) kept in f32.
TEST(Int8Activations, KQuantBlocksScaleByTheReciprocalFirst) {
  const std::vector<float> x = RandomValues(int64_t{256} * 3, 2, 0.7f);
  const Quantized a = Quantize(QuantType::kQ4_K, x);
  ASSERT_EQ(a.d.size(), 3u);
  for (int b = 0; b < 3; ++b) {
    float amax = 0.0f;
    for (int i = 0; i < 256; ++i) amax = std::fmax(amax, std::fabs(x[256 * b + i]));
    const float id = 127.0f / amax;
    EXPECT_EQ(Bits(a.d[b]), Bits(1.0f / id)) << "block " << b;
    for (int i = 0; i < 256; ++i) {
      EXPECT_EQ(a.q[256 * b + i], static_cast<int>(std::nearbyint(x[256 * b + i] * id)));
    }
  }
}

// C12.1: with amax = 127 the scale is 1, so halves show the rounding: to
// even, both signs.
TEST(Int8Activations, RoundHalfToEven) {
  std::vector<float> x(32, 0.0f);
  const float halves[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, -126.5f};
  const int want[] = {0, 2, 2, 0, -2, -2, 126, -126};
  x[0] = 127.0f;
  for (int i = 0; i < 8; ++i) x[1 + i] = halves[i];
  const Quantized a = Quantize(QuantType::kQ8_0, x);
  ASSERT_EQ(a.d[0], 1.0f);
  EXPECT_EQ(a.q[0], 127);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(a.q[1 + i], want[i]) << halves[i];
}

// C12.1: the quants stay in [-127, 127], even at the largest finite values.
TEST(Int8Activations, QuantsStayWithin127) {
  for (QuantType type : {QuantType::kQ8_0, QuantType::kQ6_K}) {
    std::vector<float> x = RandomValues(256, 3, FLT_MAX);
    x[7] = FLT_MAX;
    x[9] = -FLT_MAX;
    const Quantized a = Quantize(type, x);
    EXPECT_EQ(a.q[7], 127);
    EXPECT_EQ(a.q[9], -127);
    for (int8_t q : a.q) {
      EXPECT_GE(q, -127);
      EXPECT_LE(q, 127);
    }
  }
}

// C12.1: sums[s] is the exact sum of quants 16 s .. 16 s + 15.
TEST(Int8Activations, SumsCoverSixteenQuantsEach) {
  const std::vector<float> x = RandomValues(int64_t{256} * 2, 4);
  const Quantized a = Quantize(QuantType::kQ5_K, x);
  ASSERT_EQ(a.sums.size(), 32u);
  for (int s = 0; s < 32; ++s) {
    int sum = 0;
    for (int i = 0; i < 16; ++i) sum += a.q[16 * s + i];
    EXPECT_EQ(a.sums[s], sum) << s;
  }
}

// C12.1: a block holding an infinity or a NaN gets a NaN scale and zero
// quants (so the outputs it feeds are NaN); its neighbours are untouched.
TEST(Int8Activations, NonFiniteValuesGiveTheirBlockANanScale) {
  for (float bad : {INFINITY, -INFINITY, NAN}) {
    std::vector<float> x = RandomValues(64, 5);
    x[40] = bad;
    const Quantized a = Quantize(QuantType::kQ8_0, x);
    const Quantized clean = Quantize(QuantType::kQ8_0, RandomValues(64, 5));
    EXPECT_TRUE(std::isnan(a.d[1]));
    for (int i = 32; i < 64; ++i) EXPECT_EQ(a.q[i], 0);
    EXPECT_EQ(Bits(a.d[0]), Bits(clean.d[0]));
    EXPECT_EQ(std::memcmp(a.q.data(), clean.q.data(), 32), 0);
  }
}

// C12.1: a block whose largest magnitude is below 2^-100 is all zero, so
// no reciprocal can overflow; at 2^-100 it is quantized as usual.
TEST(Int8Activations, BlocksBelowTwoToTheMinus100AreZero) {
  for (QuantType type : {QuantType::kQ8_0, QuantType::kQ4_K}) {
    const int n = ActivationBlockElements(type);
    std::vector<float> x(static_cast<size_t>(n), 0.0f);
    x[3] = std::nextafter(0x1p-100f, 0.0f);
    x[4] = -FLT_TRUE_MIN;
    Quantized a = Quantize(type, x);
    EXPECT_EQ(Bits(a.d[0]), 0u);
    EXPECT_EQ(a.q[3], 0);
    x[3] = 0x1p-100f;
    a = Quantize(type, x);
    EXPECT_EQ(a.q[3], 127);
    // q8_K's f32 scale holds 2^-100 / 127; q8_0's F16 one underflows to 0.
    EXPECT_EQ(a.d[0], type == QuantType::kQ4_K ? 1.0f / (127.0f / 0x1p-100f) : 0.0f);
  }
}

// C12.1: a block of 32 whose amax / 127 is past the largest F16 (65504)
// gets an infinite scale, as ggml's q8_0 does; its quants are as usual.
TEST(Int8Activations, BlocksOf32BeyondTheF16RangeGetAnInfiniteScale) {
  std::vector<float> x(32, 1.0f);
  x[5] = 65504.0f * 127.0f * 1.01f;
  const Quantized a = Quantize(QuantType::kQ8_0, x);
  EXPECT_TRUE(std::isinf(a.d[0]));
  EXPECT_EQ(a.q[5], 127);
}

// Random blocks of `type` with ordinary finite F16 scales.
std::vector<std::byte> RandomBlocks(QuantType type, int64_t blocks, uint64_t seed) {
  const QuantLayout& l = LayoutOf(type);
  SplitMix64Stream rng(seed);
  std::vector<std::byte> out(static_cast<size_t>(blocks * l.block_bytes));
  for (std::byte& b : out) b = static_cast<std::byte>(rng.Next());
  std::vector<int> scale_offsets = {0};
  if (type == QuantType::kQ4_1 || type == QuantType::kQ5_1 || type == QuantType::kQ4_K ||
      type == QuantType::kQ5_K) {
    scale_offsets = {0, 2};
  }
  if (type == QuantType::kQ6_K) scale_offsets = {208};
  for (int64_t b = 0; b < blocks; ++b) {
    for (int offset : scale_offsets) {
      const float v =
          static_cast<float>(1 + (rng.Next() % 1000)) / 4096.0f * ((rng.Next() & 1) ? -1 : 1);
      const uint16_t h = ToF16(v).bits;
      std::byte* p = out.data() + b * l.block_bytes + offset;
      p[0] = static_cast<std::byte>(h & 0xff);
      p[1] = static_cast<std::byte>(h >> 8);
    }
  }
  return out;
}

// C12.2: every weight of every type, rebuilt from its integer form with
// C11's f32 operations, has the bits of the dequantized weight.
TEST(Int8IntegerBlocks, RebuildEveryDequantizedWeight) {
  for (const QuantLayout& l : QuantLayouts()) {
    const int64_t blocks = 6;
    const std::vector<std::byte> w = RandomBlocks(l.type, blocks, 10 + l.ggml_type);
    std::vector<float> deq(static_cast<size_t>(blocks * l.block_elements));
    DequantizeRow(l.type, w.data(), blocks * l.block_elements, deq.data());
    for (int64_t b = 0; b < blocks; ++b) {
      IntegerBlock ib;
      UnpackIntegerBlock(l.type, w.data() + b * l.block_bytes, &ib);
      ASSERT_EQ(ib.elements, l.block_elements);
      for (int i = 0; i < l.block_elements; ++i) {
        const int j = i / ib.sub;
        float v = (ib.d * static_cast<float>(ib.sc[j])) * static_cast<float>(ib.q[i]);
        if (ib.min_sign > 0) v = v + ib.m * static_cast<float>(ib.mn[j]);
        if (ib.min_sign < 0) v = v - ib.m * static_cast<float>(ib.mn[j]);
        ASSERT_EQ(Bits(v), Bits(deq[static_cast<size_t>(b * l.block_elements + i)]))
            << l.name << " block " << b << " weight " << i;
      }
    }
  }
}

// C12.2: a scale group's two integers are its dot product:
// (d sc) dot + sign (m mn) asum equals sum_i w_i a_i over the group in
// exact arithmetic (checked in long double, whose rounding is far below the
// f32 values compared; this is the one tolerance here, and it checks
// meaning, not bits).
TEST(Int8IntegerBlocks, GroupSumsAreTheGroupsDotProduct) {
  for (const QuantLayout& l : QuantLayouts()) {
    const std::vector<std::byte> w = RandomBlocks(l.type, 1, 20 + l.ggml_type);
    std::vector<float> deq(static_cast<size_t>(l.block_elements));
    DequantizeRow(l.type, w.data(), l.block_elements, deq.data());
    SplitMix64Stream rng(30 + l.ggml_type);
    std::vector<int8_t> a(static_cast<size_t>(l.block_elements));
    for (int8_t& v : a) v = static_cast<int8_t>(static_cast<int>(rng.Next() % 255) - 127);
    a[0] = 127;
    a[1] = -127;
    IntegerBlock ib;
    UnpackIntegerBlock(l.type, w.data(), &ib);
    for (int j = 0; j < ib.elements / ib.sub; ++j) {
      const GroupSums sums = IntegerGroupSums(ib, j, a.data());
      long double want = 0, magnitude = 0;
      for (int i = j * ib.sub; i < (j + 1) * ib.sub; ++i) {
        want += static_cast<long double>(deq[i]) * a[i];
        magnitude += std::fabs(static_cast<long double>(deq[i]) * a[i]);
      }
      const long double got = static_cast<long double>(ib.d) * ib.sc[j] * sums.dot +
                              static_cast<long double>(ib.min_sign) * ib.m * ib.mn[j] * sums.asum;
      EXPECT_LE(std::fabs(static_cast<double>(got - want)), 1e-12 * static_cast<double>(magnitude))
          << l.name << " group " << j;
      EXPECT_LT(std::abs(sums.dot), 1 << 24);
    }
  }
}

// C12.3: scale group g of the row (32 weights, 16 for Q6_K) goes to lane
// g mod 16 as an fma in increasing g (the min term of an affine type as a
// second fma), then the C1 tree. Written out here from the clause, over 37
// groups of 32 or 5 super-blocks (lanes wrap two or more times), on several
// rows; on some of them one chain over all groups (another order) gives
// other bits, so the comparison can tell the orders apart.
TEST(Int8Dot, GroupsAccumulateInLaneGModulo16ThenTheTree) {
  for (QuantType type : {QuantType::kQ8_0, QuantType::kQ4_1, QuantType::kQ4_K, QuantType::kQ6_K}) {
    const QuantLayout& l = LayoutOf(type);
    const int64_t blocks = l.block_elements == 32 ? 37 : 5, k = blocks * l.block_elements;
    int orders_told_apart = 0;
    for (uint64_t seed = 0; seed < 16; ++seed) {
      const std::vector<std::byte> w = RandomBlocks(type, blocks, 100 * seed + l.ggml_type);
      // Stretches of very different magnitudes, so that rounding shows orders.
      std::vector<float> x = RandomValues(k, 100 * seed + 50 + l.ggml_type, 2.0f);
      for (int64_t i = 0; i < k; ++i) x[i] = std::ldexp(x[i], static_cast<int>(i / 32 % 6) * 2);
      const Quantized a = Quantize(type, x);
      const Int8Activations view{a.q.data(), a.d.data(), a.sums.data()};
      float lanes[kLanes] = {};
      float sequential = 0.0f;
      int64_t g = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        IntegerBlock ib;
        UnpackIntegerBlock(type, w.data() + b * l.block_bytes, &ib);
        for (int j = 0; j < ib.elements / ib.sub; ++j, ++g) {
          const GroupSums s = IntegerGroupSums(ib, j, a.q.data() + b * l.block_elements);
          const float scale = (ib.d * static_cast<float>(ib.sc[j])) * a.d[b];
          float& lane = lanes[g % kLanes];
          lane = std::fma(static_cast<float>(s.dot), scale, lane);
          sequential = std::fma(static_cast<float>(s.dot), scale, sequential);
          if (ib.min_sign != 0) {
            const float min = (ib.m * static_cast<float>(ib.mn[j])) * a.d[b];
            lane = std::fma(static_cast<float>(ib.min_sign * s.asum), min, lane);
            sequential = std::fma(static_cast<float>(ib.min_sign * s.asum), min, sequential);
          }
        }
      }
      const float got = DotInt8(type, w.data(), view, k);
      EXPECT_EQ(Bits(got), Bits(ReduceLanes(lanes))) << l.name << " seed " << seed;
      orders_told_apart += Bits(got) != Bits(sequential);
    }
    EXPECT_GT(orders_told_apart, 0) << l.name << ": no row tells the orders apart";
  }
}

// The profile is a real difference: on the same row the exact profile
// (C11 weights in C1's chains over the f32 activations) gives other bits,
// close to the integer result.
TEST(Int8Dot, DiffersFromTheExactProfileOnlyByQuantization) {
  const QuantType type = QuantType::kQ8_0;
  const int64_t k = int64_t{32} * 16;
  const std::vector<std::byte> w = RandomBlocks(type, 16, 50);
  const std::vector<float> x = RandomValues(k, 51);
  Int8ActivationRow row;
  row.Quantize(type, x.data(), k);
  const float got = DotInt8(type, w.data(), row.View(), k);
  std::vector<float> deq(static_cast<size_t>(k));
  DequantizeRow(type, w.data(), k, deq.data());
  const float exact = Dot(x.data(), deq.data(), static_cast<size_t>(k));
  EXPECT_NE(Bits(got), Bits(exact));
  float magnitude = 0.0f;
  for (int64_t i = 0; i < k; ++i) magnitude += std::fabs(x[i] * deq[i]);
  EXPECT_LT(std::fabs(got - exact), 0.01f * magnitude);
}

TEST(QuantDotNames, RoundTrip) {
  for (QuantDot p : {QuantDot::kExact, QuantDot::kInt8}) {
    QuantDot parsed = p == QuantDot::kExact ? QuantDot::kInt8 : QuantDot::kExact;
    ASSERT_TRUE(ParseQuantDot(QuantDotName(p), &parsed));
    EXPECT_EQ(parsed, p);
  }
  QuantDot unused;
  EXPECT_FALSE(ParseQuantDot("int4", &unused));
  EXPECT_FALSE(ParseQuantDot("", &unused));
}

}  // namespace
}  // namespace samebits::numerics
