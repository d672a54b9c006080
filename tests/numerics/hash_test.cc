// Clause C9: the hashes of float buffers.
#include "engine/numerics/hash.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace samebits::numerics {
namespace {

TEST(Hash, Fnv1aKnownVectors) {
  // From the FNV reference (Fowler, Noll, Vo) test suite.
  EXPECT_EQ(Fnv1a64("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar", 6), 0x85944171f73967e8ull);
}

TEST(Hash, Xxh3KnownVector) {
  // XXH3-64 of the empty input with seed 0, as published by xxHash.
  EXPECT_EQ(HashFloatsXxh3({}), 0x2d06800538d394c2ull);
}

// Returns the floats' bits as little-endian bytes, built by shifting, so
// the expectation does not depend on the host's byte order.
std::vector<unsigned char> LittleEndianBytes(const std::vector<float>& values) {
  std::vector<unsigned char> bytes;
  for (float f : values) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    for (int k = 0; k < 4; ++k) bytes.push_back(static_cast<unsigned char>(b >> (8 * k)));
  }
  return bytes;
}

TEST(Hash, FloatsAreSerializedLittleEndian) {
  // 1.0f is 0x3f800000: bytes 00 00 80 3f.
  const std::vector<unsigned char> one = LittleEndianBytes({1.0f});
  EXPECT_EQ(one, (std::vector<unsigned char>{0x00, 0x00, 0x80, 0x3f}));
  const unsigned char raw[] = {0x00, 0x00, 0x80, 0x3f};
  const float one_f[] = {1.0f};
  EXPECT_EQ(HashFloatsFnv1a(one_f), Fnv1a64(raw, 4));
  EXPECT_EQ(HashFloatsXxh3(one_f), XXH3_64bits(raw, 4));
}

TEST(Hash, MatchesDirectHashOfBytes) {
  // Lengths around the big-endian chunk size (256 floats) and XXH3's
  // internal block sizes; values include -0, NaN and infinities.
  for (size_t n : {0u, 1u, 3u, 255u, 256u, 257u, 1000u}) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * 0.37f - 11.0f;
    if (n > 3) {
      v[1] = -0.0f;
      v[2] = std::numeric_limits<float>::quiet_NaN();
      v[3] = -std::numeric_limits<float>::infinity();
    }
    const std::vector<unsigned char> bytes = LittleEndianBytes(v);
    EXPECT_EQ(HashFloatsFnv1a(v), Fnv1a64(bytes.data(), bytes.size())) << n;
    EXPECT_EQ(HashFloatsXxh3(v), XXH3_64bits(bytes.data(), bytes.size())) << n;
  }
}

TEST(Hash, SignOfZeroChangesTheHash) {
  const float pos[] = {0.0f};
  const float neg[] = {-0.0f};
  EXPECT_NE(HashFloatsFnv1a(pos), HashFloatsFnv1a(neg));
  EXPECT_NE(HashFloatsXxh3(pos), HashFloatsXxh3(neg));
}

TEST(Hash, Hex16) {
  EXPECT_EQ(Hex16(0), "0000000000000000");
  EXPECT_EQ(Hex16(0xcbf29ce484222325ull), "cbf29ce484222325");
  EXPECT_EQ(Hex16(0xffffffffffffffffull), "ffffffffffffffff");
  EXPECT_EQ(Hex16(0x1ull), "0000000000000001");
}

TEST(Hash, ParseHex16) {
  uint64_t v = 7;
  EXPECT_TRUE(ParseHex16("cbf29ce484222325", &v));
  EXPECT_EQ(v, 0xcbf29ce484222325ull);
  // One spelling per value: the upper-case one is refused here as by the
  // protocol's and the reference files' readers, which use this parser.
  v = 7;
  EXPECT_FALSE(ParseHex16("CBF29CE484222325", &v));
  EXPECT_FALSE(ParseHex16("cbf29ce48422232A", &v));
  EXPECT_EQ(v, 7u);
  for (uint64_t x : {0ull, 1ull, 0x0123456789abcdefull, ~0ull}) {
    ASSERT_TRUE(ParseHex16(Hex16(x), &v));
    EXPECT_EQ(v, x);
  }
  v = 42;
  EXPECT_FALSE(ParseHex16("", &v));
  EXPECT_FALSE(ParseHex16("cbf29ce48422232", &v));    // 15 digits
  EXPECT_FALSE(ParseHex16("cbf29ce4842223250", &v));  // 17 digits
  EXPECT_FALSE(ParseHex16("cbf29ce48422232g", &v));
  EXPECT_FALSE(ParseHex16("0xf29ce484222325", &v));
  EXPECT_FALSE(ParseHex16(" bf29ce484222325", &v));
  EXPECT_EQ(v, 42u);
}

// C9: NaNs are counted, and hashed as the one quiet NaN 0x7fc00000 whatever
// their sign or payload, so an x86 default NaN (0xffc00000) and an ARM one
// (0x7fc00000) give the same hashes; everything else is hashed as its bits.
TEST(HashLogits, CountsNanAndInfAndHashesEveryNanAlike) {
  const float x86_nan = std::bit_cast<float>(0xffc00000u);
  const float arm_nan = std::bit_cast<float>(0x7fc00000u);
  const float payload_nan = std::bit_cast<float>(0x7fc01234u);
  const float inf = std::bit_cast<float>(0x7f800000u);
  const std::vector<float> a = {1.0f, x86_nan, -inf, 2.0f};
  const std::vector<float> b = {1.0f, arm_nan, -inf, 2.0f};
  const std::vector<float> c = {1.0f, payload_nan, -inf, 2.0f};
  const LogitHashes ha = HashLogits(a), hb = HashLogits(b), hc = HashLogits(c);
  EXPECT_EQ(ha.nan_count, 1);
  EXPECT_EQ(ha.inf_count, 1);
  EXPECT_EQ(ha.fnv1a64, hb.fnv1a64);
  EXPECT_EQ(ha.xxh3_64, hb.xxh3_64);
  EXPECT_EQ(ha.xxh3_64, hc.xxh3_64);
  // The canonical form is what is hashed: the ARM NaN row's raw bits.
  EXPECT_EQ(hb.fnv1a64, HashFloatsFnv1a(b));
  EXPECT_EQ(hb.xxh3_64, HashFloatsXxh3(b));
  // Without NaNs the hashes are the plain C9 hashes of the bits; -0 is not 0.
  const std::vector<float> plain = {1.0f, -0.0f, 3.0f};
  const std::vector<float> other = {1.0f, 0.0f, 3.0f};
  EXPECT_EQ(HashLogits(plain).xxh3_64, HashFloatsXxh3(plain));
  EXPECT_EQ(HashLogits(plain).fnv1a64, HashFloatsFnv1a(plain));
  EXPECT_NE(HashLogits(plain).xxh3_64, HashLogits(other).xxh3_64);
  EXPECT_EQ(HashLogits(plain).nan_count, 0);
  // Traces hash the same way, XXH3 only.
  EXPECT_EQ(HashActivationsXxh3(a), ha.xxh3_64);
  EXPECT_EQ(HashActivationsXxh3(plain), HashFloatsXxh3(plain));
}

}  // namespace
}  // namespace samebits::numerics
