// The attention halves of every kernel table (KernelTable::attention_scores
// and attention_values, C5) against the contract written out here with
// `numerics::Dot` and `std::fma`, bit for bit, over head widths that are and
// are not multiples of 16 and 64, key counts around the 4-key blocks,
// misaligned rows, and weights that underflow to zero. The test-only table
// (reversed key order) must be caught by the same comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/kernels/test_only_table.h"
#include "engine/numerics/lanes.h"

namespace samebits::kernels {
namespace {

// Returns `n` values in [-amp, amp) from a fixed linear congruential sequence.
std::vector<float> Values(size_t n, uint32_t seed, float amp) {
  std::vector<float> v(n);
  uint32_t s = seed;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = (static_cast<float>(s >> 8) * 0x1p-24f * 2.0f - 1.0f) * amp;
  }
  return v;
}

struct Case {
  int hd, n_keys, stride;
  std::vector<float> q, k, p, v;
};

// Returns true when `kt` gives the contract's bits on every case; names the
// first failing case in `why`.
bool TableMatchesContract(const KernelTable& kt, std::string* why) {
  for (int hd : {1, 15, 16, 17, 33, 64, 80, 100, 128}) {
    for (int n_keys : {1, 2, 3, 4, 5, 8, 9, 31}) {
      for (float amp : {1.0f, 30.0f}) {  // 30: products far apart in size
        const int stride = 2 * hd + 3;   // odd stride: misaligned rows
        const auto q = Values(hd, 11u + hd, amp);
        const auto k = Values(static_cast<size_t>(n_keys) * stride, 7u * hd + n_keys, amp);
        const auto v = Values(static_cast<size_t>(n_keys) * stride, 5u + n_keys, 1.0f);
        auto p = Values(n_keys, 3u + n_keys, 1.0f);
        if (amp > 1.0f) p[0] = 0x1p-140f;                                      // a subnormal weight
        std::vector<float> want_s(n_keys + 1, 7.0f), got_s(n_keys + 1, 7.0f);  // guard element
        std::vector<float> want_o(hd + 1, 7.0f), got_o(hd + 1, 7.0f);
        for (int j = 0; j < n_keys; ++j) {
          want_s[j] = numerics::Dot(q.data(), k.data() + j * stride, hd) * 0.125f;
        }
        for (int d = 0; d < hd; ++d) want_o[d] = 0.0f;
        for (int j = 0; j < n_keys; ++j) {
          for (int d = 0; d < hd; ++d) want_o[d] = std::fma(p[j], v[j * stride + d], want_o[d]);
        }
        kt.attention_scores(q.data(), k.data(), stride, n_keys, hd, 0.125f, got_s.data());
        kt.attention_values(p.data(), v.data(), stride, n_keys, hd, got_o.data());
        const bool same =
            std::memcmp(want_s.data(), got_s.data(), sizeof(float) * want_s.size()) == 0 &&
            std::memcmp(want_o.data(), got_o.data(), sizeof(float) * want_o.size()) == 0;
        if (!same) {
          *why = std::string(IsaName(kt.isa)) + " hd " + std::to_string(hd) + " keys " +
                 std::to_string(n_keys) + " amp " + std::to_string(amp);
          return false;
        }
      }
    }
  }
  return true;
}

TEST(Attention, EveryTableMatchesTheContract) {
  for (Isa isa : AvailableIsas()) {
    std::string why;
    EXPECT_TRUE(TableMatchesContract(GetKernelTable(isa), &why)) << why;
  }
}

// The negative control: summing V in reverse key order is caught.
TEST(Attention, NegativeControlTheReversedTableIsCaught) {
  for (Isa isa : AvailableIsas()) {
    std::string why;
    EXPECT_FALSE(TableMatchesContract(TestOnlyReversedAttentionTable(isa), &why)) << IsaName(isa);
  }
}

}  // namespace
}  // namespace samebits::kernels
