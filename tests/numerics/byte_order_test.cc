// Little-endian storage on any host (engine/numerics/byte_order.h). The
// expectations are built from explicit little-endian bytes, so they hold on
// a big-endian host too (where the swap is not a no-op).
#include "engine/numerics/byte_order.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/numerics/half.h"

namespace samebits::numerics {
namespace {

std::vector<std::byte> Bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

TEST(ByteOrder, ReverseEachElementReversesWithinEachUnit) {
  std::vector<std::byte> b = Bytes({1, 2, 3, 4, 5, 6, 7, 8});
  ReverseEachElement(b, 4);
  EXPECT_EQ(b, Bytes({4, 3, 2, 1, 8, 7, 6, 5}));
  ReverseEachElement(b, 4);
  EXPECT_EQ(b, Bytes({1, 2, 3, 4, 5, 6, 7, 8}));  // its own inverse
  ReverseEachElement(b, 2);
  EXPECT_EQ(b, Bytes({2, 1, 4, 3, 6, 5, 8, 7}));
  ReverseEachElement(b, 2);
  ReverseEachElement(b, 8);
  EXPECT_EQ(b, Bytes({8, 7, 6, 5, 4, 3, 2, 1}));
  ReverseEachElement(b, 1);
  EXPECT_EQ(b, Bytes({8, 7, 6, 5, 4, 3, 2, 1}));
}

TEST(ByteOrder, UnitsOfTheEngineTypes) {
  EXPECT_EQ(ByteOrderUnit(DType::kF32), 4);
  EXPECT_EQ(ByteOrderUnit(DType::kF16), 2);
  EXPECT_EQ(ByteOrderUnit(DType::kBF16), 2);
}

TEST(ByteOrder, LittleEndianFileBytesBecomeNativeValues) {
  // 1.0f and -2.0f as a file stores them: 0x3f800000, 0xc0000000 little-endian.
  std::vector<std::byte> f32 = Bytes({0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0});
  ASSERT_TRUE(SwapLittleEndianInPlace(f32, DType::kF32));
  float values[2];
  std::memcpy(values, f32.data(), sizeof values);
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[1], -2.0f);
  // And back: the native values serialize to the file's bytes again.
  ASSERT_TRUE(SwapLittleEndianInPlace(f32, DType::kF32));
  EXPECT_EQ(f32, Bytes({0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0}));

  // BF16 1.0 is 0x3f80, F16 1.0 is 0x3c00.
  std::vector<std::byte> bf16 = Bytes({0x80, 0x3f});
  ASSERT_TRUE(SwapLittleEndianInPlace(bf16, DType::kBF16));
  BF16 b;
  std::memcpy(&b, bf16.data(), sizeof b);
  EXPECT_EQ(ToFloat(b), 1.0f);
  std::vector<std::byte> f16 = Bytes({0x00, 0x3c});
  ASSERT_TRUE(SwapLittleEndianInPlace(f16, DType::kF16));
  F16 h;
  std::memcpy(&h, f16.data(), sizeof h);
  EXPECT_EQ(ToFloat(h), 1.0f);
}

}  // namespace
}  // namespace samebits::numerics
