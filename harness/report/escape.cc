#include "harness/report/escape.h"

#include <algorithm>
#include <cctype>
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

// True for the characters that start Markdown syntax anywhere in a line
// (emphasis, code, links, tables, inline HTML, entities, strikethrough, and
// the backslash itself). A backslash before any of them writes it as it is
// (CommonMark, "Backslash escapes"); every other character needs nothing.
bool IsMarkdownSyntax(char c) {
  switch (c) {
    case '\\':
    case '`':
    case '*':
    case '_':
    case '|':
    case '<':
    case '>':
    case '&':
    case '[':
    case ']':
    case '~':
      return true;
    default:
      return false;
  }
}

bool IsWordCharacter(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || static_cast<unsigned char>(c) >= 0x80;
}

// True when the character at `i` has a letter or digit on both sides, where
// CommonMark's flanking rules let no `_` open or close emphasis.
bool IsIntraword(std::string_view text, size_t i) {
  return i > 0 && i + 1 < text.size() && IsWordCharacter(text[i - 1]) &&
         IsWordCharacter(text[i + 1]);
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
  const std::string clean = RemoveControlCharacters(text);
  std::string out;
  for (size_t i = 0; i < clean.size(); ++i) {
    const char c = clean[i];
    if (c == '_' && IsIntraword(clean, i)) {
      out += c;  // x86_64, cpu_t1: an underscore inside a word emphasizes nothing
    } else if (IsMarkdownSyntax(c)) {
      out += '\\';
      out += c;
    } else if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string MarkdownCode(std::string_view text) {
  std::string body;
  size_t longest = 0, run = 0;
  for (char c : RemoveControlCharacters(text)) {
    run = (c == '`') ? run + 1 : 0;
    longest = std::max(longest, run);
    if (c == '\n' || c == '\r' || c == '\t') {
      body += ' ';
    } else if (c == '|') {
      body += "\\|";  // GFM splits table cells at a bare | even in code
    } else {
      body += c;
    }
  }
  const std::string ticks(longest + 1, '`');
  // A span that starts or ends with a backtick needs a space between the
  // two, which CommonMark strips again.
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`');
  const std::string space = pad ? " " : "";
  return ticks + space + body + space + ticks;
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
