// The pre-tokenizer matches each valid UTF-8 run once, without PCRE2
// checking the text again on every call (which was quadratic: 5 MB took
// over an hour). Its words must be exactly those of the plain way, PCRE2's
// own invalid-UTF mode over the whole piece, for every known pre-tokenizer
// and texts full of invalid bytes, so the token ids cannot change. Speed is
// left to a benchmark (BENCHMARKS.md), never timed here.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <gtest/gtest.h>
#include <pcre2.h>

#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "engine/formats/pretokenizer.h"
#include "engine/formats/pretokenizer_patterns.h"
#include "engine/formats/utf8.h"

namespace samebits::formats {
namespace {

// The plain way, as the pre-tokenizer did it before: each pattern compiled
// with PCRE2_MATCH_INVALID_UTF and matched over the whole piece.
std::vector<std::string> ReferenceSplit(const PreTokenizerPatterns& patterns,
                                        std::string_view text) {
  std::vector<std::string_view> pieces;
  if (!text.empty()) pieces.push_back(text);
  pcre2_match_data* match = pcre2_match_data_create(1, nullptr);
  for (const std::string& regex : patterns.regexes) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(regex.data()), regex.size(),
                      PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error, &offset, nullptr);
    EXPECT_NE(code, nullptr) << regex;
    if (code == nullptr) break;
    std::vector<std::string_view> next;
    for (std::string_view piece : pieces) {
      size_t at = 0, kept = 0;
      while (at < piece.size()) {
        const int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(piece.data()), piece.size(),
                                   at, 0, match, nullptr);
        if (rc < 0) break;
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match);
        if (ov[1] <= ov[0]) {
          if (ov[0] >= piece.size()) break;
          at = ov[0] + Utf8CharAt(piece, ov[0]);
          continue;
        }
        if (ov[0] > kept) next.push_back(piece.substr(kept, ov[0] - kept));
        next.push_back(piece.substr(ov[0], ov[1] - ov[0]));
        at = kept = ov[1];
      }
      if (kept < piece.size()) next.push_back(piece.substr(kept));
    }
    pieces.swap(next);
    pcre2_code_free(code);
  }
  pcre2_match_data_free(match);
  return std::vector<std::string>(pieces.begin(), pieces.end());
}

// Returns a text of `n` parts drawn from letters, digits, spaces, line
// breaks, punctuation, contractions, CJK, emoji and every kind of invalid
// UTF-8 (stray continuation bytes, truncated, overlong, surrogate, above
// U+10FFFF, 0xFF).
std::string RandomText(std::mt19937& rng, int n) {
  static const std::vector<std::string> parts = {
      "a",
      "Z",
      "word",
      "Hello",
      "é",
      "ß",
      "中文",
      "한",
      "😀",
      "1",
      "2024",
      " ",
      "  ",
      "\t",
      "\n",
      "\r\n",
      "'s",
      "'LL",
      ".",
      ",!?",
      "$",
      "...",
      "—",
      "\u00a0",
      "\x80",
      "\xe2\x82",
      "\xc0\xaf",
      "\xed\xa0\x80",
      "\xf4\x90\x80\x80",
      "\xff",
      "\xf0\x9f",
  };
  std::uniform_int_distribution<size_t> pick(0, parts.size() - 1);
  std::string out;
  for (int i = 0; i < n; ++i) out += parts[pick(rng)];
  return out;
}

std::vector<std::string> Names() {
  std::vector<std::string> names = {""};  // llama.cpp's "default"
  const std::string known = KnownPreTokenizers();
  size_t start = 0;
  while (start < known.size()) {
    const size_t comma = known.find(", ", start);
    names.push_back(known.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 2;
  }
  return names;
}

// Returns whether every pattern of `patterns` compiles (one of llama.cpp's
// lists, deepseek-llm's letters, has a range PCRE2 calls out of order: that
// vocabulary is refused on loading, by the old way as by the new).
bool Compiles(const PreTokenizerPatterns& patterns) {
  try {
    PreTokenizer(patterns, "test");
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Patterns whose meaning at the edge of a valid run is the point: `$` and
// `^` hold only at the ends of the piece, a lookbehind or lookahead meets
// an invalid byte as it meets the end.
std::vector<PreTokenizerPatterns> EdgePatterns() {
  return {{{R"(\s+$)"}, false, false},          {{R"(^\s+|\p{L}+)"}, false, false},
          {{R"(\s+(?!\S)|\S+)"}, false, false}, {{R"((?<=\p{L})\p{N}+)"}, false, false},
          {{R"(\b\p{L}+\b)"}, false, false},    {{R"(.$|^.)"}, false, false}};
}

// Every known pre-tokenizer (and patterns that test the edges of a valid
// run), on random texts with invalid bytes anywhere, cuts exactly the
// words the plain way cuts.
TEST(PreTokenizerSplit, EveryPreTokenizerCutsTheWordsThePlainWayCuts) {
  std::vector<std::pair<std::string, PreTokenizerPatterns>> all;
  for (const std::string& name : Names()) {
    const PreTokenizerPatterns* patterns = FindPreTokenizer(name);
    ASSERT_NE(patterns, nullptr) << name;
    all.emplace_back(name, *patterns);
  }
  ASSERT_GT(all.size(), 20u);
  for (const PreTokenizerPatterns& edge : EdgePatterns()) all.emplace_back(edge.regexes[0], edge);
  std::mt19937 rng(20261201);
  int compared = 0;
  for (const auto& [name, patterns] : all) {
    if (!Compiles(patterns)) continue;
    const PreTokenizer pre(patterns, name);
    for (int round = 0; round < 40; ++round) {
      const std::string text = RandomText(rng, 1 + round * 7);
      const std::vector<std::string_view> got = pre.Split(text);
      const std::vector<std::string> want = ReferenceSplit(patterns, text);
      ASSERT_EQ(std::vector<std::string>(got.begin(), got.end()), want)
          << "pre-tokenizer '" << name << "', text of " << text.size() << " bytes";
    }
    ++compared;
  }
  EXPECT_GE(compared, static_cast<int>(all.size()) - 1) << "more than one list does not compile";
}

// The words of a long text (far more than any earlier test split) are the
// plain way's too, and together are the text.
TEST(PreTokenizerSplit, ALongTextIsCutAsThePlainWayCutsIt) {
  std::mt19937 rng(7);
  const std::string text = RandomText(rng, 20000);
  for (const char* name : {"llama3", "tekken", "qwen2"}) {
    const PreTokenizer pre(*FindPreTokenizer(name), name);
    const std::vector<std::string_view> got = pre.Split(text);
    std::string joined;
    for (std::string_view w : got) joined += w;
    EXPECT_EQ(joined, text) << name;
    EXPECT_EQ(std::vector<std::string>(got.begin(), got.end()),
              ReferenceSplit(*FindPreTokenizer(name), text))
        << name;
  }
}

// The validity rule the runs are cut by is PCRE2's own: every short byte
// sequence is valid for ValidUtf8CharAt exactly when PCRE2 accepts it.
TEST(PreTokenizerSplit, ValidUtf8IsWhatPcre2CallsValid) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* any = pcre2_compile(reinterpret_cast<PCRE2_SPTR>("^.$"), PCRE2_ZERO_TERMINATED,
                                  PCRE2_UTF | PCRE2_DOTALL, &error, &offset, nullptr);
  ASSERT_NE(any, nullptr);
  pcre2_match_data* match = pcre2_match_data_create(1, nullptr);
  std::mt19937 rng(3);
  int valid = 0;
  for (int i = 0; i < 200000; ++i) {
    const int lead = static_cast<int>(rng() % 256);
    std::string s(1, static_cast<char>(lead));
    const size_t extra = rng() % 4;
    for (size_t k = 0; k < extra; ++k) s.push_back(static_cast<char>(0x80 | (rng() % 64)));
    // PCRE2 says whether the whole string is valid UTF-8 and one character.
    const int rc =
        pcre2_match(any, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0, 0, match, nullptr);
    const bool pcre_valid_char = rc > 0;
    const bool ours = ValidUtf8CharAt(s, 0) == s.size();
    ASSERT_EQ(ours, pcre_valid_char) << "bytes of length " << s.size() << ", lead " << lead;
    valid += ours ? 1 : 0;
  }
  EXPECT_GT(valid, 1000);
  pcre2_match_data_free(match);
  pcre2_code_free(any);
}

}  // namespace
}  // namespace samebits::formats
