// Hashes of float buffers (README.md, clause C9). Both hashes cover the IEEE
// bits of each float serialized little-endian, so big- and little-endian
// machines produce the same digest for the same values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace samebits::numerics {

// Returns the 64-bit FNV-1a hash of `size` bytes at `data`
// (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
uint64_t Fnv1a64(const void* data, size_t size);

// Returns FNV-1a 64 of the floats' bits, each serialized little-endian.
uint64_t HashFloatsFnv1a(std::span<const float> values);

// Returns XXH3-64 (seed 0) of the floats' bits, each serialized little-endian.
uint64_t HashFloatsXxh3(std::span<const float> values);

// Returns `value` as exactly 16 lower-case hex digits.
std::string Hex16(uint64_t value);

// The hashes of one output's logits as clause C9 defines them (README.md):
// both digests over the IEEE bits serialized little-endian, with every NaN
// first replaced by the quiet NaN 0x7fc00000, plus the NaN and Inf counts.
// NaN signs and payloads are not portable (x86 and ARM make differently
// signed default NaNs; libm's fmaf and the FMA instruction propagate
// payloads differently), so they are counted, not hashed.
struct LogitHashes {
  uint64_t fnv1a64 = 0;
  uint64_t xxh3_64 = 0;
  int nan_count = 0;
  int inf_count = 0;
};
// Returns the C9 hashes and counts of `logits`.
LogitHashes HashLogits(std::span<const float> logits);

// Returns the C9 XXH3-64 alone (NaNs canonical), for activation traces,
// which need neither the FNV-1a digest nor the counts.
uint64_t HashActivationsXxh3(std::span<const float> values);

// Returns true and sets `*out` when `text` is exactly 16 lower-case hex
// digits, as Hex16 writes them; returns false and leaves `*out` alone
// otherwise. The one rule for every hash the project reads (the protocol's
// records, reference files, the store, dump names): one value has one
// spelling, so files and records compare as text.
bool ParseHex16(std::string_view text, uint64_t* out);

}  // namespace samebits::numerics
