// KernelTable::softmax_portable of every table against contract C4 written
// out here (the maximum, numerics::PortableExp of s - m, numerics::Sum in
// the C1 lane order, the division), bit for bit: every length from 1 to 70
// and some longer (the vector forms' tails), scores of attention's usual
// range and of large magnitude, ties, zeros of both signs, -inf (a masked
// key) and NaN-free extremes, with a guard element past the end that must
// stay untouched. A negative control shows that a softmax summing in plain
// index order, as a scalar loop would, is caught.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/numerics/lanes.h"
#include "engine/numerics/portable_math.h"
#include "tests/kernels/kernel_test_helpers.h"

namespace samebits::kernels {
namespace {

// C4 with the portable exp, the contract's own steps.
void ContractSoftmax(float* s, int64_t n) {
  float m = s[0];
  for (int64_t j = 1; j < n; ++j) m = s[j] > m ? s[j] : m;
  for (int64_t j = 0; j < n; ++j) s[j] = numerics::PortableExp(s[j] - m);
  const float z = numerics::Sum(s, static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) s[j] = s[j] / z;
}

// The control's wrong order: one running sum, element by element.
void SequentialSumSoftmax(float* s, int64_t n) {
  float m = s[0];
  for (int64_t j = 1; j < n; ++j) m = s[j] > m ? s[j] : m;
  float z = 0.0f;
  for (int64_t j = 0; j < n; ++j) {
    s[j] = numerics::PortableExp(s[j] - m);
    z = z + s[j];
  }
  for (int64_t j = 0; j < n; ++j) s[j] = s[j] / z;
}

// The score rows every softmax is run on: random rows of every length and
// amplitude, and rows built around the cases where order or sign could show.
std::vector<std::vector<float>> Rows() {
  std::vector<std::vector<float>> rows;
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 70; ++n) lengths.push_back(n);
  for (int64_t n : {127, 128, 129, 257, 1000}) lengths.push_back(n);
  for (int64_t n : lengths) {
    for (float amp : {0.5f, 8.0f, 80.0f, 3e4f}) {
      rows.push_back(
          testing::LcgValues(static_cast<size_t>(n), 17u * static_cast<uint32_t>(n) + 3u, amp));
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  rows.push_back({0.0f, -0.0f, 0.0f, -0.0f});                       // the maximum is a zero
  rows.push_back({-0.0f, 0.0f, -0.0f, -1.0f, -0.0f, 0.0f, -2.0f});  // either sign first
  std::vector<float> zeros(37);
  for (size_t j = 0; j < zeros.size(); ++j) zeros[j] = j % 3 == 0 ? -0.0f : 0.0f;
  rows.push_back(zeros);
  rows.push_back({-inf, 1.0f, -inf, 2.0f, -inf});  // masked keys
  std::vector<float> ties(33, 5.0f);
  ties[20] = 7.0f;
  rows.push_back(ties);
  rows.push_back({std::numeric_limits<float>::max(), 0.0f, -std::numeric_limits<float>::max()});
  rows.push_back({0x1p-149f, -0x1p-149f, 0x1p-126f});  // subnormal and smallest normal
  return rows;
}

// Returns true when `softmax` gives the contract's bits on every row and
// writes nothing past it; names the first mismatch in `why`.
template <class Softmax>
bool MatchesContract(Softmax softmax, const std::string& name, std::string* why) {
  for (const std::vector<float>& row : Rows()) {
    const int64_t n = static_cast<int64_t>(row.size());
    std::vector<float> want = row, got = row;
    want.push_back(7.0f);  // the guard
    got.push_back(7.0f);
    ContractSoftmax(want.data(), n);
    softmax(got.data(), n);
    if (std::memcmp(want.data(), got.data(), sizeof(float) * want.size()) != 0) {
      for (size_t j = 0; j < want.size(); ++j) {
        if (std::bit_cast<uint32_t>(want[j]) != std::bit_cast<uint32_t>(got[j])) {
          *why = name + ": length " + std::to_string(n) + ", element " + std::to_string(j) +
                 (j == want.size() - 1 ? " (the guard)" : "");
          break;
        }
      }
      return false;
    }
  }
  return true;
}

TEST(Softmax, EveryTableMatchesTheContract) {
  for (Isa isa : AvailableIsas()) {
    const KernelTable& kt = GetKernelTable(isa);
    std::string why;
    EXPECT_TRUE(MatchesContract(kt.softmax_portable, IsaName(isa), &why)) << why;
  }
}

TEST(Softmax, AnEmptyRowIsLeftAlone) {
  for (Isa isa : AvailableIsas()) {
    float guard = 7.0f;
    GetKernelTable(isa).softmax_portable(&guard, 0);
    EXPECT_EQ(guard, 7.0f) << IsaName(isa);
  }
}

// The negative control: summing in plain index order is caught.
TEST(Softmax, NegativeControlASequentialSumIsCaught) {
  std::string why;
  EXPECT_FALSE(MatchesContract(SequentialSumSoftmax, "sequential sum", &why));
}

}  // namespace
}  // namespace samebits::kernels
