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

// Returns true and sets `*out` when `text` is exactly 16 hex digits (either
// case); returns false and leaves `*out` alone otherwise.
bool ParseHex16(std::string_view text, uint64_t* out);

}  // namespace samebits::numerics
