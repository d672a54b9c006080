// A SentencePiece-style vocabulary (pieces with scores, `▁` for a space,
// `<0xNN>` byte-fallback pieces), as embedded in GGUF (`tokenizer.ggml.*`)
// and in llama2.c's `tokenizer.bin`. It turns a scenario's text prompt into
// token ids the way llama2.c's `encode` does, and token ids back into text.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace samebits::formats {

// SentencePiece piece types, as GGUF's `tokenizer.ggml.token_type` stores them.
enum class PieceType : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct Piece {
  std::string text;  // as stored, `▁` (U+2581) or ' ' for a space
  float score = 0.0f;
  PieceType type = PieceType::kNormal;

  bool operator==(const Piece&) const = default;
};

class Vocabulary {
 public:
  // Builds the lookup tables. `bos_id` / `eos_id` may be -1 (none).
  // Throws CheckpointError naming `label` when the pieces are empty or an id
  // is out of range.
  Vocabulary(std::vector<Piece> pieces, int32_t bos_id, int32_t eos_id, const std::string& label);

  // Returns the number of pieces.
  int size() const { return static_cast<int>(pieces_.size()); }
  // Returns piece `id` (which must be in range).
  const Piece& piece(int32_t id) const { return pieces_[id]; }
  const std::vector<Piece>& pieces() const { return pieces_; }
  int32_t bos_id() const { return bos_id_; }
  int32_t eos_id() const { return eos_id_; }

  // Returns the ids of `text`: BOS first when `add_bos`, then a dummy
  // prefix space, each UTF-8 character as its piece (or its bytes as
  // `<0xNN>` pieces, or the unknown piece), then the pair merges of highest
  // score, first pair on ties, until none applies (llama2.c's `encode`).
  std::vector<int32_t> Tokenize(std::string_view text, bool add_bos) const;

  // Returns the text of `tokens`: control pieces are dropped, byte pieces
  // become their byte, `▁` becomes a space, and the dummy prefix space of
  // the first piece after BOS (or at the start) is removed.
  std::string Detokenize(std::span<const int32_t> tokens) const;

  // Returns the text of one token, `prev` being the one before it (-1 at
  // the start), by the same rules as `Detokenize`. An id out of range gives "".
  std::string DecodeToken(int32_t prev, int32_t token) const;

 private:
  // Returns the id of the piece whose normalised text is `s`, or -1.
  int32_t Lookup(std::string_view s) const;

  std::vector<Piece> pieces_;
  int32_t bos_id_ = -1;
  int32_t eos_id_ = -1;
  int32_t unk_id_ = -1;
  // Normalised text (`▁` replaced by ' ') to the lowest id carrying it.
  std::unordered_map<std::string, int32_t> by_text_;
  int32_t byte_ids_[256];
};

// Returns the vocabulary in llama2.c `tokenizer.bin` bytes: an int32
// max_token_length, then per piece a float score, an int32 length and the
// bytes. With `expected_count` >= 0 exactly that many pieces are read (as
// run.c does; trailing bytes are an error); otherwise pieces are read to the
// end. BOS is 1 and EOS is 2, as in llama2.c. Throws CheckpointError naming
// `label`.
std::shared_ptr<const Vocabulary> ParseTokenizerBin(std::span<const std::byte> bytes,
                                                    const std::string& label,
                                                    int expected_count = -1);

// Returns the vocabulary in the llama2.c `tokenizer.bin` file at `path`.
std::shared_ptr<const Vocabulary> LoadTokenizerBin(const std::string& path,
                                                   int expected_count = -1);

// Returns `pieces` in `tokenizer.bin` format (for tests and export).
std::vector<std::byte> WriteTokenizerBin(const Vocabulary& vocabulary);

}  // namespace samebits::formats
