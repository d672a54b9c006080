// The pre-tokenizers of byte-level BPE vocabularies, by the name GGUF stores
// in `tokenizer.ggml.pre`: the regular expressions that cut text into words
// before the merges run, as llama.cpp (src/llama-vocab.cpp) lists them, and
// the flags llama.cpp ties to the same name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace samebits::formats {

struct PreTokenizerPatterns {
  // Applied in order: each one cuts every piece the previous ones left into
  // its matches and the text between them.
  std::vector<std::string> regexes;
  // A word that is a token as a whole is taken as it is, merges or not
  // (llama-3's tokenizer.json says `ignore_merges`).
  bool ignore_merges = false;
  // llama.cpp's BOS default when the file has no `tokenizer.ggml.add_bos_token`.
  bool add_bos = false;
};

// Returns the patterns of pre-tokenizer `name`, or null for a name this
// engine does not know. An empty name is llama.cpp's "default".
const PreTokenizerPatterns* FindPreTokenizer(std::string_view name);

// Returns the known names, comma-separated, for error messages.
std::string KnownPreTokenizers();

}  // namespace samebits::formats
