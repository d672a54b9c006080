// Base64 (RFC 4648, the standard alphabet, with padding), for the raw logit
// rows a bundle carries as JSON text. Decoding is strict: only the canonical
// spelling of some bytes is accepted (no white space, no missing or extra
// padding, zero unused bits), so one byte string has one text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace samebits::exchange {

// Returns the base64 text of `bytes`.
std::string Base64Encode(const std::vector<uint8_t>& bytes);

// Returns the length of the base64 text of `byte_count` bytes.
uint64_t Base64Length(uint64_t byte_count);

// Returns the bytes `text` spells, or nothing when it is not canonical base64.
std::optional<std::vector<uint8_t>> Base64Decode(std::string_view text);

}  // namespace samebits::exchange
