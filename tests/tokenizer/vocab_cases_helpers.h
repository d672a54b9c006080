// llama.cpp's tokenizer test files (`ggml-vocab-NAME.gguf.inp` / `.out`)
// and the check of a vocabulary against them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/formats/vocabulary.h"

namespace samebits::testing {

struct VocabCase {
  std::string input;
  std::vector<int32_t> expected;  // no BOS
};

// Returns the cases of `inp_text` and `out_text` read as llama.cpp's
// test-tokenizer-0 reads them: inputs are separated by
// "\n__ggml_vocab_test__\n" (so an input may be empty or end in newlines of
// its own), the text after the last separator is one more input unless it
// is empty; each `.out` line, stripped of surrounding whitespace, holds one
// input's ids separated by spaces. Throws std::runtime_error when the
// counts differ or an id is not a number.
std::vector<VocabCase> ParseVocabCases(const std::string& inp_text, const std::string& out_text);

// Returns `s` with control bytes, quotes and non-ASCII bytes escaped, for messages.
std::string Escape(const std::string& s);

// Returns one message per failing case of `cases`: the input, the expected
// and the actual ids (tokenized without BOS), or the decoded text when
// decoding the expected ids does not give the input back. Decoding is
// checked only where the vocabulary can represent the input: the expected
// ids hold no unknown piece. `roundtrips` counts the cases whose decoding
// was checked.
std::vector<std::string> CheckVocabCases(const formats::Vocabulary& vocabulary,
                                         const std::vector<VocabCase>& cases, int* roundtrips);

}  // namespace samebits::testing
