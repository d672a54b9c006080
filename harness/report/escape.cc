#include "harness/report/escape.h"

#include <cstdint>

#include "harness/analysis/terminal_text.h"

namespace samebits::harness::report {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool IsForbiddenControl(char c) {
  const auto u = static_cast<uint8_t>(c);
  return (u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7F;
}

// Returns the entity HTML and XML both write for `c` (`apostrophe` for a
// single quote, which HTML 4 lacks a name for), or nullptr for a character
// written as it is.
const char* MarkupEntity(char c, const char* apostrophe) {
  switch (c) {
    case '&':
      return "&amp;";
    case '<':
      return "&lt;";
    case '>':
      return "&gt;";
    case '"':
      return "&quot;";
    case '\'':
      return apostrophe;
    default:
      return nullptr;
  }
}

}  // namespace

std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string RemoveControlCharacters(std::string_view text) {
  std::string clean = SanitizeUtf8(text);
  std::string out;
  out.reserve(clean.size());
  for (char c : clean) {
    if (!IsForbiddenControl(c)) out += c;
  }
  return out;
}

std::string HtmlEscape(std::string_view text) {
  std::string out;
  for (char c : RemoveControlCharacters(text)) {
    if (const char* entity = MarkupEntity(c, "&#39;")) {
      out += entity;
    } else {
      out += c;
    }
  }
  return out;
}

std::string XmlEscape(std::string_view text, bool attribute) {
  std::string out;
  for (char c : RemoveControlCharacters(text)) {
    if (const char* entity = MarkupEntity(c, "&apos;")) {
      out += entity;
      continue;
    }
    switch (c) {
      // Attribute-value normalization would turn these into spaces.
      case '\n':
        out += attribute ? "&#10;" : "\n";
        break;
      case '\r':
        out += attribute ? "&#13;" : "&#13;";
        break;
      case '\t':
        out += attribute ? "&#9;" : "\t";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string MarkdownCell(std::string_view text) {
  std::string out;
  for (char c : HtmlEscape(text)) {
    switch (c) {
      case '|':
        out += "\\|";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '`':
        out += "&#96;";
        break;
      case '*':
        out += "\\*";
        break;
      case '_':
        out += "\\_";
        break;
      case '\n':
      case '\r':
      case '\t':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string CodeFenceFor(std::string_view text) {
  size_t longest = 0, run = 0;
  for (char c : text) {
    run = (c == '`') ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return std::string(longest >= 3 ? longest + 1 : 3, '`');
}

}  // namespace samebits::harness::report
