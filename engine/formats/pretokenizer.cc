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
    // MATCH_INVALID_UTF: invalid UTF-8 in the text is no error; it matches nothing.
    c->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(regex.data()), regex.size(),
                            PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error_code,
                            &error_offset, nullptr);
    if (c->code == nullptr) {
      throw CheckpointError(label + ": pre-tokenizer pattern '" + regex + "' does not compile at " +
                            std::to_string(error_offset) + ": " + Pcre2Message(error_code));
    }
    compiled_.push_back(std::move(c));
  }
}

PreTokenizer::~PreTokenizer() = default;

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
      // sees the end of the piece, not the text after it.
      size_t at = 0;    // where the next search starts
      size_t kept = 0;  // the end of what has been cut off
      while (at < piece.size()) {
        const int rc = pcre2_match(c->code, reinterpret_cast<PCRE2_SPTR>(piece.data()),
                                   piece.size(), at, 0, match.get(), nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) throw std::runtime_error("pre-tokenizer: " + Pcre2Message(rc));
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
        const size_t begin = ovector[0], end = ovector[1];
        if (end <= begin) {  // an empty match cuts nothing: look further on
          if (begin >= piece.size()) break;
          at = begin + Utf8CharAt(piece, begin);
          continue;
        }
        if (begin > kept) next.push_back(piece.substr(kept, begin - kept));
        next.push_back(piece.substr(begin, end - begin));
        at = kept = end;
      }
      if (kept < piece.size()) next.push_back(piece.substr(kept));
    }
    pieces.swap(next);
  }
  return pieces;
}

}  // namespace samebits::formats
