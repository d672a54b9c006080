// KernelTable::exp_portable of every table against numerics::PortableExp
// (contract C3), bit for bit: over floats spread across every exponent
// (a stride through all 2^32 bit patterns), the special values and the
// edges where the result turns to +0, a subnormal or +inf, NaNs with their
// payloads and signs, and every length from 1 to 40 (the vector forms'
// tails), with guard elements past the end that must stay untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/numerics/portable_exp.h"
#include "engine/numerics/portable_math.h"

namespace samebits::kernels {
namespace {

float FromBits(uint32_t b) {
  return std::bit_cast<float>(b);
}

// Floats that matter for exp: the edges of its ranges and their neighbours,
// zeros, infinities, NaNs (quiet and signalling payloads, both signs) and
// subnormals.
std::vector<float> SpecialInputs() {
  std::vector<float> v;
  for (const float edge : {numerics::portable_exp::kLargestFinite,
                           numerics::portable_exp::kSmallestNonzero, -87.33654f, -103.97208f,
                           -88.0f, -100.0f, 88.0f, 0.0f, 1.0f, -1.0f, 0x1p-25f, 0x1.62e43p-7f}) {
    const uint32_t b = std::bit_cast<uint32_t>(edge);
    for (uint32_t d = 0; d < 5; ++d) {  // the edge and two floats either side
      v.push_back(FromBits(b + d - 2));
    }
  }
  for (const uint32_t bits : {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                              0xffc00000u, 0x7fc12345u, 0xff812345u, 0x7f800001u, 0x7fbfffffu,
                              0x00000001u, 0x807fffffu, 0x00800000u, 0x7f7fffffu, 0xff7fffffu}) {
    v.push_back(FromBits(bits));
  }
  return v;
}

// Floats at a stride through every bit pattern (both signs, every
// exponent), plus a dense sweep of the softmax's usual range [-30, 0].
std::vector<float> SweptInputs() {
  std::vector<float> v;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099) v.push_back(FromBits(uint32_t(b)));
  for (int i = 0; i <= 30000; ++i) v.push_back(-30.0f + 0.001f * static_cast<float>(i));
  return v;
}

// Returns true when `kt.exp_portable` gives PortableExp's bits on `in`
// taken `len` at a time, leaving a guard after each piece untouched; names
// the first mismatch in `why`.
bool MatchesPortableExp(const KernelTable& kt, const std::vector<float>& in, int64_t len,
                        std::string* why) {
  constexpr float kGuard = 12345.0f;
  std::vector<float> buf(static_cast<size_t>(len) + 1);
  for (size_t at = 0; at < in.size(); at += static_cast<size_t>(len)) {
    const int64_t n = std::min<int64_t>(len, static_cast<int64_t>(in.size() - at));
    std::memcpy(buf.data(), in.data() + at, sizeof(float) * static_cast<size_t>(n));
    buf[static_cast<size_t>(n)] = kGuard;
    kt.exp_portable(buf.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const float x = in[at + static_cast<size_t>(i)];
      const uint32_t want = std::bit_cast<uint32_t>(numerics::PortableExp(x));
      const uint32_t got = std::bit_cast<uint32_t>(buf[static_cast<size_t>(i)]);
      if (want != got) {
        *why = std::string(IsaName(kt.isa)) + " length " + std::to_string(len) + ": exp of bits " +
               std::to_string(std::bit_cast<uint32_t>(x)) + " gave bits " + std::to_string(got) +
               ", want " + std::to_string(want);
        return false;
      }
    }
    if (std::bit_cast<uint32_t>(buf[static_cast<size_t>(n)]) != std::bit_cast<uint32_t>(kGuard)) {
      *why = std::string(IsaName(kt.isa)) + " length " + std::to_string(n) + " wrote past the end";
      return false;
    }
  }
  return true;
}

TEST(ExpPortable, EveryTableGivesPortableExpsBitsOnSpecialValues) {
  const std::vector<float> in = SpecialInputs();
  for (Isa isa : AvailableIsas()) {
    for (int64_t len = 1; len <= 40; ++len) {
      std::string why;
      EXPECT_TRUE(MatchesPortableExp(GetKernelTable(isa), in, len, &why)) << why;
    }
  }
}

TEST(ExpPortable, EveryTableGivesPortableExpsBitsAcrossAllExponents) {
  const std::vector<float> in = SweptInputs();
  for (Isa isa : AvailableIsas()) {
    for (const int64_t len : {16, 37, 256}) {
      std::string why;
      EXPECT_TRUE(MatchesPortableExp(GetKernelTable(isa), in, len, &why)) << why;
    }
  }
}

// The check can fail: an exp one ulp off in a single lane is caught.
void OffByOneUlpInLaneThree(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    x[i] = numerics::PortableExp(x[i]);
    if (i % 16 == 3) x[i] = std::bit_cast<float>(std::bit_cast<uint32_t>(x[i]) + 1u);
  }
}

TEST(ExpPortable, NegativeControlAnExpOneUlpOffIsCaught) {
  KernelTable broken = GetKernelTable(Isa::kScalar);
  broken.exp_portable = OffByOneUlpInLaneThree;
  std::string why;
  EXPECT_FALSE(MatchesPortableExp(broken, SweptInputs(), 16, &why));
  EXPECT_NE(why.find("length 16"), std::string::npos) << why;
}

}  // namespace
}  // namespace samebits::kernels
