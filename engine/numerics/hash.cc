#include "engine/numerics/hash.h"

#include <xxhash.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

namespace samebits::numerics {
namespace {

constexpr uint64_t kFnvOffsetBasis = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;
constexpr uint32_t kCanonicalNan = 0x7fc00000u;

uint64_t Fnv1aUpdate(uint64_t h, const unsigned char* bytes, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    h ^= bytes[i];
    h *= kFnvPrime;
  }
  return h;
}

// Writes the bits of `count` floats little-endian into `out` (4 * count bytes).
// Only big-endian hosts call it (an `if constexpr` branch), hence
// [[maybe_unused]]: clang warns that a little-endian build never emits it.
[[maybe_unused]] void SerializeLittleEndian(const float* values, size_t count, unsigned char* out) {
  for (size_t i = 0; i < count; ++i) {
    const uint32_t bits = std::bit_cast<uint32_t>(values[i]);
    out[4 * i + 0] = static_cast<unsigned char>(bits);
    out[4 * i + 1] = static_cast<unsigned char>(bits >> 8);
    out[4 * i + 2] = static_cast<unsigned char>(bits >> 16);
    out[4 * i + 3] = static_cast<unsigned char>(bits >> 24);
  }
}

// Big-endian hosts serialize through a small stack buffer in chunks.
constexpr size_t kChunkFloats = 256;

}  // namespace

uint64_t Fnv1a64(const void* data, size_t size) {
  return Fnv1aUpdate(kFnvOffsetBasis, static_cast<const unsigned char*>(data), size);
}

uint64_t HashFloatsFnv1a(std::span<const float> values) {
  if constexpr (std::endian::native == std::endian::little) {
    return Fnv1a64(values.data(), values.size_bytes());
  } else {
    uint64_t h = kFnvOffsetBasis;
    unsigned char buffer[4 * kChunkFloats];
    for (size_t i = 0; i < values.size(); i += kChunkFloats) {
      const size_t n = values.size() - i < kChunkFloats ? values.size() - i : kChunkFloats;
      SerializeLittleEndian(values.data() + i, n, buffer);
      h = Fnv1aUpdate(h, buffer, 4 * n);
    }
    return h;
  }
}

uint64_t HashFloatsXxh3(std::span<const float> values) {
  if constexpr (std::endian::native == std::endian::little) {
    return XXH3_64bits(values.data(), values.size_bytes());
  } else {
    // The streaming interface gives the same digest as the one-shot call
    // over the concatenated bytes.
    XXH3_state_t* state = XXH3_createState();
    XXH3_64bits_reset(state);
    unsigned char buffer[4 * kChunkFloats];
    for (size_t i = 0; i < values.size(); i += kChunkFloats) {
      const size_t n = values.size() - i < kChunkFloats ? values.size() - i : kChunkFloats;
      SerializeLittleEndian(values.data() + i, n, buffer);
      XXH3_64bits_update(state, buffer, 4 * n);
    }
    const uint64_t h = XXH3_64bits_digest(state);
    XXH3_freeState(state);
    return h;
  }
}

namespace {

// Returns `values`, or a copy in `scratch` with every NaN made the canonical
// quiet NaN when there is one (C9).
std::span<const float> CanonicalNans(std::span<const float> values, std::vector<float>& scratch) {
  bool any_nan = false;
  for (const float v : values) any_nan = any_nan || std::isnan(v);
  if (!any_nan) return values;
  scratch.assign(values.begin(), values.end());
  for (float& v : scratch) {
    if (std::isnan(v)) v = std::bit_cast<float>(kCanonicalNan);
  }
  return scratch;
}

}  // namespace

LogitHashes HashLogits(std::span<const float> logits) {
  LogitHashes hashes;
  for (const float v : logits) {
    hashes.nan_count += std::isnan(v) ? 1 : 0;
    hashes.inf_count += std::isinf(v) ? 1 : 0;
  }
  std::vector<float> scratch;
  const std::span<const float> hashed = CanonicalNans(logits, scratch);
  hashes.fnv1a64 = HashFloatsFnv1a(hashed);
  hashes.xxh3_64 = HashFloatsXxh3(hashed);
  return hashes;
}

uint64_t HashActivationsXxh3(std::span<const float> values) {
  std::vector<float> scratch;
  return HashFloatsXxh3(CanonicalNans(values, scratch));
}

std::string Hex16(uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i) {
    text[i] = kDigits[value & 0xf];
    value >>= 4;
  }
  return text;
}

bool ParseHex16(std::string_view text, uint64_t* out) {
  if (text.size() != 16) return false;
  uint64_t value = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else
      return false;
    value = (value << 4) | static_cast<uint64_t>(digit);
  }
  *out = value;
  return true;
}

}  // namespace samebits::numerics
