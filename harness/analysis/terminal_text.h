// Text from outside the harness (a child's messages and stderr, names from
// its hello) made safe to print on a terminal: an engine must not be able
// to move the cursor, clear the screen, retitle the window or print lines
// that pass for the harness's own summary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace samebits::harness {

enum class TerminalEscape : uint8_t {
  // A quoted value (a name, a message, a stored field): line feeds and tabs
  // escaped too, backslashes doubled, so any escape in the output came from
  // here.
  kQuoted,
  // The program's own output as it reaches the terminal (terminal_guard.h):
  // line feeds and tabs kept, backslashes kept (the text may already hold
  // quoted values and their escapes), every other control escaped.
  kProgramText,
};

// Appends `text` to `out`, escaped as `mode` says. The one escaping of
// terminal text: TerminalSafe, TerminalSafeLines and the guard on the
// program's standard streams all call it.
void AppendTerminalSafe(std::string& out, std::string_view text, TerminalEscape mode);

// Returns how many bytes at the end of `text` begin a UTF-8 sequence that
// the text cuts short (0 to 3): a streaming writer holds them back until
// the rest arrives, rather than escaping half a character.
size_t IncompleteUtf8Tail(std::string_view text);

// Returns `text` with every control character (C0 including line breaks and
// tab, DEL, and the C1 range U+0080..U+009F) and every byte that is not
// part of well-formed UTF-8 written as a visible escape: \n, \r, \t, \e,
// else \xNN (each byte of an encoded C1 character). Backslashes are doubled,
// so an escape in the output always came from this function.
std::string TerminalSafe(std::string_view text);

// Returns the length of the well-formed UTF-8 sequence starting at
// `text[i]` (1 for ASCII), or 0 when the byte there does not start one
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
size_t Utf8SequenceLength(std::string_view text, size_t i);

// Returns `text` escaped as TerminalSafe does, except that line feeds stay
// line breaks: for the harness's own multi-line messages.
std::string TerminalSafeLines(std::string_view text);

}  // namespace samebits::harness
