// The ISA attention rows (engine/model/cpu_attention.h) against the portable
// row, bit for bit, over head widths that are and are not multiples of 16
// and 64, key counts around the 4-key blocks, windows that start past key 0,
// and scores whose softmax weights underflow to zero.
#include "engine/model/cpu_attention.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/model/cpu_ops.h"
#include "engine/numerics/math.h"

namespace samebits::model::cpu {
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

TEST(CpuAttention, EveryIsaRowMatchesThePortableRow) {
  const auto& math = numerics::GetMathLibrary(numerics::MathProfile::kPortable);
  for (kernels::Isa isa : kernels::AvailableIsas()) {
    const AttentionRowFn row = AttentionRowFor(isa);
    const auto& kt = kernels::GetKernelTable(isa);
    for (int hd : {1, 15, 16, 17, 33, 64, 80, 100, 128}) {
      for (int n_keys : {1, 2, 3, 4, 5, 8, 9, 31}) {
        for (int first : {0, 3}) {
          for (float amp : {1.0f, 30.0f}) {  // 30: many weights underflow to zero
            const int kv_heads = 2, stride = kv_heads * hd + 3;  // odd stride: misaligned rows
            const int last = first + n_keys - 1;
            const auto q = Values(hd, 11u + hd, amp);
            const auto k = Values(static_cast<size_t>(last + 1) * stride, 7u * hd + n_keys, amp);
            const auto v = Values(static_cast<size_t>(last + 1) * stride, 5u + n_keys, 1.0f);
            std::vector<float> s1(n_keys), s2(n_keys);
            std::vector<float> want(hd + 1, 7.0f), got(hd + 1, 7.0f);  // guard element
            AttentionRow(kt, math, q.data(), k.data() + hd, v.data() + hd, stride, first, last, hd,
                         0.125f, s1.data(), want.data());
            row(kt, math, q.data(), k.data() + hd, v.data() + hd, stride, first, last, hd, 0.125f,
                s2.data(), got.data(), false);
            ASSERT_EQ(0, std::memcmp(want.data(), got.data(), sizeof(float) * (hd + 1)))
                << kernels::IsaName(isa) << " hd " << hd << " keys " << n_keys << " first " << first
                << " amp " << amp;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace samebits::model::cpu
