// The attention halves of every kernel table (KernelTable::attention_scores
// and attention_values, C5) against the contract written out here with
// `numerics::Dot` and `std::fma`, bit for bit, over head widths that are and
// are not multiples of 16 and 64, key counts around the 4-key blocks,
// misaligned rows, weights that underflow to zero, and GQA groups of 1 to 8
// query heads (the kernels take up to four at once). The test-only table
// (reversed key order) must be caught by the same comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/kernels/test_only_table.h"
#include "engine/numerics/lanes.h"
#include "tests/kernels/kernel_test_helpers.h"

namespace samebits::kernels {
namespace {

// Returns true when `kt` gives the contract's bits on every case; names the
// first failing case in `why`. Each case runs a GQA group of `heads` query
// heads over one K/V head; every head must give what the contract gives for
// it alone, and nothing outside the outputs may be written.
bool TableMatchesContract(const KernelTable& kt, std::string* why) {
  for (int heads : {1, 2, 3, 4, 5, 8}) {
    for (int hd : {1, 15, 16, 17, 33, 64, 80, 100, 128}) {
      for (int n_keys : {1, 2, 3, 4, 5, 8, 9, 31}) {
        for (float amp : {1.0f, 30.0f}) {       // 30: products far apart in size
          const int stride = 2 * hd + 3;        // odd stride: misaligned rows
          const int64_t s_stride = n_keys + 1;  // a guard element after each head's scores
          const auto q = testing::LcgValues(static_cast<size_t>(heads) * hd, 11u + hd + heads, amp);
          const auto k =
              testing::LcgValues(static_cast<size_t>(n_keys) * stride, 7u * hd + n_keys, amp);
          const auto v =
              testing::LcgValues(static_cast<size_t>(n_keys) * stride, 5u + n_keys, 1.0f);
          auto p =
              testing::LcgValues(static_cast<size_t>(heads) * s_stride, 3u + n_keys + heads, 1.0f);
          if (amp > 1.0f) p[0] = 0x1p-140f;  // a subnormal weight
          const size_t n_s = static_cast<size_t>(heads) * s_stride;
          const size_t n_o = static_cast<size_t>(heads) * hd + 1;  // a guard element
          std::vector<float> want_s(n_s, 7.0f), got_s(n_s, 7.0f);
          std::vector<float> want_o(n_o, 7.0f), got_o(n_o, 7.0f);
          for (int i = 0; i < heads; ++i) {
            const float* q_i = q.data() + static_cast<size_t>(i) * hd;
            const float* p_i = p.data() + i * s_stride;
            float* o_i = want_o.data() + static_cast<size_t>(i) * hd;
            for (int j = 0; j < n_keys; ++j) {
              want_s[i * s_stride + j] =
                  numerics::Dot(q_i, k.data() + static_cast<size_t>(j) * stride, hd) * 0.125f;
            }
            for (int d = 0; d < hd; ++d) o_i[d] = 0.0f;
            for (int j = 0; j < n_keys; ++j) {
              for (int d = 0; d < hd; ++d) o_i[d] = std::fma(p_i[j], v[j * stride + d], o_i[d]);
            }
          }
          kt.attention_scores(q.data(), heads, k.data(), stride, n_keys, hd, 0.125f, got_s.data(),
                              s_stride);
          kt.attention_values(p.data(), s_stride, heads, v.data(), stride, n_keys, hd,
                              got_o.data());
          const bool same =
              std::memcmp(want_s.data(), got_s.data(), sizeof(float) * want_s.size()) == 0 &&
              std::memcmp(want_o.data(), got_o.data(), sizeof(float) * want_o.size()) == 0;
          if (!same) {
            *why = std::string(IsaName(kt.isa)) + " heads " + std::to_string(heads) + " hd " +
                   std::to_string(hd) + " keys " + std::to_string(n_keys) + " amp " +
                   std::to_string(amp);
            return false;
          }
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
