// Little-endian storage on any host. Checkpoint files (GGUF, safetensors,
// llama2.c), logit dumps and hashes keep multi-byte values little-endian;
// the engine computes on native values. On a little-endian host the two are
// the same bytes; on a big-endian host (s390x) every element's bytes are
// reversed at the boundary: when a tensor is loaded, written or hashed.
#pragma once

#include <bit>
#include <cstddef>
#include <span>

#include "engine/numerics/dtype.h"

namespace samebits::numerics {

inline constexpr bool kLittleEndianHost = std::endian::native == std::endian::little;

// Returns the size of the unit whose bytes a big-endian host reverses for
// `dtype` (the element size of f32/f16/bf16), or 0 for a type whose layout
// has no such single unit.
int ByteOrderUnit(DType dtype);

// Reverses the bytes of each `unit`-byte element of `bytes` in place
// (unit 1, 2, 4 or 8; bytes.size() a multiple of it). Applied to
// little-endian data on a big-endian host it yields native values, and back.
void ReverseEachElement(std::span<std::byte> bytes, int unit);

// Turns `bytes` of `dtype` elements from little-endian into native order,
// or from native into little-endian (the same swap), in place: nothing on a
// little-endian host, ReverseEachElement on a big-endian one. Returns false
// (bytes untouched) when the host is big-endian and the type has no
// byte-order unit.
bool SwapLittleEndianInPlace(std::span<std::byte> bytes, DType dtype);

}  // namespace samebits::numerics
