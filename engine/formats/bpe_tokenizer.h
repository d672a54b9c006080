// Byte-level BPE as GGUF stores it (`tokenizer.ggml.model` = "gpt2"): the
// text is cut into words by the pre-tokenizer `tokenizer.ggml.pre` names,
// each word's bytes are spelled as GPT-2's printable stand-in characters,
// and the adjacent pair of lowest merge rank (`tokenizer.ggml.merges`,
// leftmost on ties) is merged until none applies, as llama.cpp does.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/formats/pretokenizer.h"
#include "engine/formats/vocabulary.h"

namespace samebits::formats {

// Returns GPT-2's printable stand-in for byte `b` (UTF-8): the piece text
// byte-level vocabularies spell that byte with ("Ġ" for a space).
const std::string& ByteStandIn(uint8_t b);

class BpeTokenizer {
 public:
  // Checks and indexes `pieces` and `merges` ("left right", rank = index).
  // Throws CheckpointError naming `label` for an unknown pre-tokenizer or a
  // merge that is not two pieces separated by a space. A vocabulary without
  // a piece for some bytes loads (as in llama.cpp); `Encode` refuses a text
  // that needs one.
  BpeTokenizer(const std::vector<Piece>& pieces, const std::vector<std::string>& merges,
               const std::string& pre, const std::string& label);

  // Appends the ids of `text` (plain text, no special pieces) to `out`.
  // Throws CheckpointError naming the byte and its offset (`offset` plus its
  // index in `text`) when the text needs a byte the vocabulary has no piece
  // for (no merge result covers it).
  void Encode(std::string_view text, std::vector<int32_t>& out, size_t offset = 0) const;

  // Returns the bytes `piece` stands for: a normal piece's stand-in
  // characters turned back into bytes, a byte piece's byte, a user-defined
  // piece's text as stored, nothing for control and unknown pieces.
  static std::string Decode(const Piece& piece);

  const PreTokenizerPatterns& patterns() const { return *patterns_; }

 private:
  // Appends the ids of one word, spelled in stand-in characters, whose
  // first byte is at `offset` of the caller's text.
  void EncodeWord(const std::string& word, std::vector<int32_t>& out, size_t offset) const;
  // Returns the rank of merging `left` and `right`, or -1.
  int32_t Rank(std::string_view left, std::string_view right, std::string& scratch) const;

  const PreTokenizerPatterns* patterns_ = nullptr;
  std::unique_ptr<PreTokenizer> pre_;
  std::unordered_map<std::string, int32_t> ids_;    // piece text -> lowest id
  std::unordered_map<std::string, int32_t> ranks_;  // "left right" -> lowest rank
  int32_t byte_ids_[256];                           // each byte's piece id, -1 when it has none
  std::string label_;                               // the file, for errors
};

}  // namespace samebits::formats
