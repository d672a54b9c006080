// Escaping for every string that comes from outside the harness (checkpoint
// names, scenario names, child messages, stderr tails) before it is written
// into a report. A report is read by a browser, a CI system or a code review
// tool; a hostile or merely unlucky string must never become markup there.
#pragma once

#include <string>
#include <string_view>

namespace samebits::harness::report {

// Returns `text` as valid UTF-8: every byte that does not start a
// well-formed sequence (overlong forms, surrogates and code points above
// U+10FFFF included) becomes U+FFFD. Child output is bytes, not text.
std::string SanitizeUtf8(std::string_view text);

// Returns `text` with the control characters XML 1.0 forbids removed (all of
// U+0000..U+001F except tab, line feed and carriage return, and U+007F), after
// `SanitizeUtf8`.
std::string RemoveControlCharacters(std::string_view text);

// Returns `text` safe as HTML text or as a double- or single-quoted attribute
// value: & < > " ' escaped, control characters removed, UTF-8 sanitized.
std::string HtmlEscape(std::string_view text);

// Returns `text` safe as XML 1.0 character data or attribute value (the same
// escapes as HTML, using &apos; for the single quote); line breaks inside
// attribute values are written as character references so parsers keep them.
std::string XmlEscape(std::string_view text, bool attribute);
inline std::string XmlAttribute(std::string_view text) {
  return XmlEscape(text, /*attribute=*/true);
}
inline std::string XmlText(std::string_view text) {
  return XmlEscape(text, /*attribute=*/false);
}

// Returns `text` safe inside one cell of a Markdown table or a line of
// Markdown text: every character that starts Markdown syntax (inline HTML,
// entities, emphasis, code, links, `|`) backslash-escaped, nothing else
// (no HTML entities: a reader of the raw file sees the text), control
// characters removed, and line breaks replaced by spaces so the row stays
// one line.
std::string MarkdownCell(std::string_view text);

// Returns `text` as one Markdown code span (backslashes are literal there):
// fenced by one more backtick than its longest run, `|` escaped for tables,
// line breaks replaced by spaces.
std::string MarkdownCode(std::string_view text);

// Returns the shortest run of backticks that does not occur in `text`, at
// least three long: a code fence that `text` cannot close.
std::string CodeFenceFor(std::string_view text);

}  // namespace samebits::harness::report
