#include "engine/formats/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>

#include "engine/formats/checkpoint.h"
#include "engine/formats/utf8.h"

namespace samebits::formats {
namespace {

// Returns PCRE2's message for `error_code`.
std::string Pcre2Message(int error_code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(error_code, buffer, sizeof(buffer)) < 0) {
    return "PCRE2 error " + std::to_string(error_code);
  }
  return reinterpret_cast<const char*>(buffer);
}

}  // namespace

struct PreTokenizer::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

PreTokenizer::PreTokenizer(const PreTokenizerPatterns& patterns, const std::string& label) {
  for (const std::string& regex : patterns.regexes) {
    int error_code = 0;
    PCRE2_SIZE error_offset = 0;
    auto c = std::make_unique<Compiled>();
    // UCP: `\s`, `\d`, `\w` and POSIX classes follow Unicode properties.
    // Invalid UTF-8 is handled by Split, which matches only valid runs.
    c->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(regex.data()), regex.size(),
                            PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
    if (c->code == nullptr) {
      throw CheckpointError(label + ": pre-tokenizer pattern '" + regex + "' does not compile at " +
                            std::to_string(error_offset) + ": " + Pcre2Message(error_code));
    }
    // The JIT where this PCRE2 has one; without it (or when it fails) the
    // interpreter matches the same way.
    pcre2_jit_compile(c->code, PCRE2_JIT_COMPLETE);
    compiled_.push_back(std::move(c));
  }
}

PreTokenizer::~PreTokenizer() = default;

namespace {

// Returns the end of the run of well-formed UTF-8 characters starting at
// `s[at]` (`at` itself when the bytes there are not one).
size_t ValidRunEnd(std::string_view s, size_t at) {
  while (at < s.size()) {
    const size_t n = ValidUtf8CharAt(s, at);
    if (n == 0) break;
    at += n;
  }
  return at;
}

// Returns pcre2_match's code for `code` on the valid UTF-8 `subject` from
// `at`, with `options`. The subject was validated once by the caller: PCRE2
// would otherwise check it again on every call, from `at` to the end, which
// made splitting a long text quadratic. A JIT stack too small for a long
// match falls back to the interpreter.
int MatchValid(const pcre2_code* code, std::string_view subject, size_t at, uint32_t options,
               pcre2_match_data* match) {
  const auto* text = reinterpret_cast<PCRE2_SPTR>(subject.data());
  options |= PCRE2_NO_UTF_CHECK;
  int rc = pcre2_match(code, text, subject.size(), at, options, match, nullptr);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
    rc = pcre2_match(code, text, subject.size(), at, options | PCRE2_NO_JIT, match, nullptr);
  return rc;
}

}  // namespace

std::vector<std::string_view> PreTokenizer::Split(std::string_view text) const {
  std::vector<std::string_view> pieces;
  if (text.empty()) return pieces;
  pieces.push_back(text);
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
      pcre2_match_data_create(1, nullptr), &pcre2_match_data_free);
  if (!match) throw std::bad_alloc();
  std::vector<std::string_view> next;
  for (const auto& c : compiled_) {
    next.clear();
    for (std::string_view piece : pieces) {
      // Each piece is matched on its own, as llama.cpp does: a lookahead
      // sees the end of the piece, not the text after it. Invalid UTF-8 is
      // a barrier no match crosses (PCRE2's MATCH_INVALID_UTF rule): each
      // valid run is matched as a subject of its own, where `^` and `$`
      // hold only at the ends of the piece.
      size_t kept = 0;  // the end of what has been cut off
      for (size_t run = 0; run < piece.size();) {
        const size_t run_end = ValidRunEnd(piece, run);
        if (run_end == run) {  // an invalid byte: matches nothing
          ++run;
          continue;
        }
        const std::string_view valid = piece.substr(run, run_end - run);
        const uint32_t options =
            (run > 0 ? PCRE2_NOTBOL : 0u) | (run_end < piece.size() ? PCRE2_NOTEOL : 0u);
        size_t at = 0;  // where the next search starts, in `valid`
        while (at < valid.size()) {
          const int rc = MatchValid(c->code, valid, at, options, match.get());
          if (rc == PCRE2_ERROR_NOMATCH) break;
          if (rc < 0) throw std::runtime_error("pre-tokenizer: " + Pcre2Message(rc));
          const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
          const size_t begin = ovector[0], end = ovector[1];
          if (end <= begin) {  // an empty match cuts nothing: look further on
            if (begin >= valid.size()) break;
            at = begin + Utf8CharAt(valid, begin);
            continue;
          }
          if (run + begin > kept) next.push_back(piece.substr(kept, run + begin - kept));
          next.push_back(piece.substr(run + begin, end - begin));
          at = end;
          kept = run + end;
        }
        run = run_end;
      }
      if (kept < piece.size()) next.push_back(piece.substr(kept));
    }
    pieces.swap(next);
  }
  return pieces;
}

}  // namespace samebits::formats
