// Terminal-safe text (terminal_text.h).
#include "harness/analysis/terminal_text.h"

#include <cstdint>

namespace samebits::harness {
namespace {

void AppendHex(std::string& out, unsigned char byte) {
  static const char kDigits[] = "0123456789abcdef";
  out += "\\x";
  out += kDigits[byte >> 4];
  out += kDigits[byte & 15];
}

}  // namespace

size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char b0 = at(0);
  if (b0 < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the allowed range of the second byte
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    n = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    n = 3;
    if (b0 == 0xe0) lo = 0xa0;  // no overlong forms
    if (b0 == 0xed) hi = 0x9f;  // no surrogates
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    n = 4;
    if (b0 == 0xf0) lo = 0x90;  // no overlong forms
    if (b0 == 0xf4) hi = 0x8f;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (at(1) < lo || at(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (at(k) < 0x80 || at(k) > 0xbf) return 0;
  }
  return n;
}

void AppendTerminalSafe(std::string& out, std::string_view text, TerminalEscape mode) {
  const bool text_mode = mode == TerminalEscape::kProgramText;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\\' && !text_mode) {
      out += "\\\\";
      ++i;
    } else if ((c >= 0x20 && c < 0x7f) || (text_mode && (c == '\n' || c == '\t'))) {
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\n' || c == '\r' || c == '\t' || c == 0x1b) {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : "\\e";
      ++i;
    } else if (c < 0x80) {
      AppendHex(out, c);  // the other C0 controls and DEL
      ++i;
    } else if (const size_t n = Utf8SequenceLength(text, i); n == 0) {
      AppendHex(out, c);  // not UTF-8: a byte, shown as one
      ++i;
    } else if (n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) {
      // U+0080..U+009F: C1 controls (0x9b is a CSI on many terminals).
      AppendHex(out, c);
      AppendHex(out, static_cast<unsigned char>(text[i + 1]));
      i += 2;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
}

size_t IncompleteUtf8Tail(std::string_view text) {
  for (size_t k = 1; k <= 3 && k <= text.size(); ++k) {
    const unsigned char lead = static_cast<unsigned char>(text[text.size() - k]);
    if (lead >= 0x80 && lead <= 0xbf) continue;  // a continuation byte: look further back
    const size_t n = lead >= 0xc2 && lead <= 0xdf   ? 2
                     : lead >= 0xe0 && lead <= 0xef ? 3
                     : lead >= 0xf0 && lead <= 0xf4 ? 4
                                                    : 0;
    return n > k ? k : 0;
  }
  return 0;
}

std::string TerminalSafe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  AppendTerminalSafe(out, text, TerminalEscape::kQuoted);
  return out;
}

std::string TerminalSafeLines(std::string_view text) {
  std::string out;
  for (size_t start = 0;;) {
    const size_t end = text.find('\n', start);
    out += TerminalSafe(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return out;
    out += '\n';
    start = end + 1;
  }
}

}  // namespace samebits::harness
