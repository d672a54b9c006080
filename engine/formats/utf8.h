// The few UTF-8 facts the tokenizers need, without validation: a tokenizer
// cuts text at character boundaries but must keep every byte, valid or not.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace samebits::formats {

// Returns the length of the UTF-8 sequence that byte `c` starts (1 for a
// continuation or invalid byte, so that it stands alone).
inline size_t Utf8Length(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  if ((c & 0xF8) == 0xF0) return 4;
  return 1;
}

// Returns the length of the character at `s[at]`, cut at the end of `s`.
inline size_t Utf8CharAt(std::string_view s, size_t at) {
  return std::min(Utf8Length(static_cast<unsigned char>(s[at])), s.size() - at);
}

// Appends code point `cp` (below 0x110000) to `out` in UTF-8.
inline void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace samebits::formats
