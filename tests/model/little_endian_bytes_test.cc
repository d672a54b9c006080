// model::LittleEndianBytes: what writers and HashWeights see of a tensor is
// its elements little-endian on every host.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "engine/model/weights.h"

namespace samebits::model {
namespace {

TEST(LittleEndianBytes, F32ElementsAreSerializedLittleEndian) {
  const float values[2] = {1.0f, -2.0f};  // 0x3f800000, 0xc0000000
  TensorView view;
  view.dtype = DType::kF32;
  view.shape = {2};
  view.data = reinterpret_cast<const std::byte*>(values);
  std::vector<std::byte> scratch;
  const std::span<const std::byte> le = LittleEndianBytes(view, scratch);
  const std::vector<std::byte> got(le.begin(), le.end());
  const std::vector<std::byte> want = {std::byte{0x00}, std::byte{0x00}, std::byte{0x80},
                                       std::byte{0x3f}, std::byte{0x00}, std::byte{0x00},
                                       std::byte{0x00}, std::byte{0xc0}};
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace samebits::model
