// Cuts text into the words a byte-level BPE vocabulary merges within, by a
// pre-tokenizer's regular expressions (pretokenizer_patterns.h) compiled
// with PCRE2's Unicode properties (`\p{L}`, `\p{N}`, `\s` as Unicode
// defines them), rather than hand-written category tables.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/formats/pretokenizer_patterns.h"

namespace samebits::formats {

class PreTokenizer {
 public:
  // Compiles `patterns`. Throws CheckpointError naming `label` and the
  // pattern when one does not compile.
  PreTokenizer(const PreTokenizerPatterns& patterns, const std::string& label);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Returns the words of `text`, in order, which together are `text`
  // exactly: each pattern in turn cuts every piece into its matches and the
  // text between them. Invalid UTF-8 matches no pattern, so its bytes stay
  // in pieces of their own (llama.cpp turns them into U+FFFD instead).
  // Throws std::runtime_error when PCRE2 gives up (its match limit).
  std::vector<std::string_view> Split(std::string_view text) const;

 private:
  struct Compiled;
  std::vector<std::unique_ptr<Compiled>> compiled_;
};

}  // namespace samebits::formats
