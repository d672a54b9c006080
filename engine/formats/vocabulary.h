// A checkpoint's vocabulary, as embedded in GGUF (`tokenizer.ggml.*`) and
// in llama2.c's `tokenizer.bin`: either SentencePiece-style (pieces with
// scores, `▁` for a space, `<0xNN>` byte-fallback pieces; GGUF's
// `tokenizer.ggml.model` = "llama") or byte-level BPE ("gpt2", with merges
// and a pre-tokenizer, bpe_tokenizer.h). It turns a scenario's text into
// token ids the way llama.cpp does, and token ids back into text.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
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

// How text becomes pieces.
enum class TokenizerModel {
  kSentencePiece,     // GGUF "llama", llama2.c: bigram merges by score
  kBytePairEncoding,  // GGUF "gpt2": byte-level BPE, merges by rank
};

class BpeTokenizer;  // engine/formats/bpe_tokenizer.h

struct Piece {
  std::string text;  // as stored, `▁` (U+2581) or ' ' for a space
  float score = 0.0f;
  PieceType type = PieceType::kNormal;

  bool operator==(const Piece&) const = default;
};

// What a vocabulary needs besides its pieces (GGUF's other `tokenizer.ggml.*` keys).
struct VocabularyOptions {
  TokenizerModel model = TokenizerModel::kSentencePiece;
  int32_t bos_id = -1;  // -1: none
  int32_t eos_id = -1;
  // Whether a sequence starts with BOS (`add_bos_token`); unset: llama.cpp's
  // default for the model and pre-tokenizer.
  std::optional<bool> add_bos;
  // SentencePiece: a space before the text (`add_space_prefix`).
  bool add_space_prefix = true;
  // Byte-level BPE: the pre-tokenizer's name (`pre`) and the merges.
  std::string pre;
  std::vector<std::string> merges;

  bool operator==(const VocabularyOptions&) const = default;
};

class Vocabulary {
 public:
  // Builds the lookup tables. `bos_id` / `eos_id` may be -1 (none).
  // Throws CheckpointError naming `label` when the pieces are empty or an id
  // is out of range.
  Vocabulary(std::vector<Piece> pieces, int32_t bos_id, int32_t eos_id, const std::string& label);
  // The same for any model; for byte-level BPE, also checks the merges and
  // the pre-tokenizer's name.
  Vocabulary(std::vector<Piece> pieces, VocabularyOptions options, const std::string& label);
  ~Vocabulary();

  // Returns the number of pieces.
  int size() const { return static_cast<int>(pieces_.size()); }
  // Returns piece `id` (which must be in range).
  const Piece& piece(int32_t id) const { return pieces_[id]; }
  const std::vector<Piece>& pieces() const { return pieces_; }
  int32_t bos_id() const { return bos_id_; }
  int32_t eos_id() const { return eos_id_; }
  const VocabularyOptions& options() const { return options_; }
  TokenizerModel model() const { return options_.model; }
  // Returns whether a sequence starts with BOS, as the file says (or
  // llama.cpp's default for its model).
  bool add_bos() const { return add_bos_; }

  // Returns the ids of `text`: BOS first when `add_bos` (and the vocabulary
  // has one); user-defined pieces (phi-3's `<|user|>`) wherever their text
  // occurs; the text between them as the model encodes it, as llama.cpp
  // does. SentencePiece: a space before the first stretch of text (unless
  // `add_space_prefix` is false), each UTF-8 character as a symbol, the
  // adjacent pair whose concatenation is the piece of highest score merged
  // first (leftmost on ties) until none is a piece, a character that is no
  // piece as its `<0xNN>` byte pieces (or the unknown piece), which merge
  // with nothing (llama2.c's rule; formats/README.md). Byte-level
  // BPE: bpe_tokenizer.h. Control pieces never come out of text.
  std::vector<int32_t> Tokenize(std::string_view text, bool add_bos) const;

  // Returns the text of `tokens`: control pieces are dropped, byte pieces
  // become their byte, `▁` becomes a space (BPE: stand-in characters
  // become their bytes), and the prefix space of the first piece after BOS
  // (or at the start) is removed where the tokenizer added one.
  std::string Detokenize(std::span<const int32_t> tokens) const;

  // Returns the text of one token, `prev` being the one before it (-1 at
  // the start), by the same rules as `Detokenize`. An id out of range gives "".
  std::string DecodeToken(int32_t prev, int32_t token) const;

 private:
  // Returns the id of the piece whose normalised text is `s`, or -1.
  int32_t Lookup(std::string_view s) const;
  // Appends the SentencePiece ids of `text` (no special pieces) to `out`.
  void EncodeSentencePiece(std::string_view text, std::vector<int32_t>& out) const;

  std::vector<Piece> pieces_;
  VocabularyOptions options_;
  int32_t bos_id_ = -1;
  int32_t eos_id_ = -1;
  int32_t unk_id_ = -1;
  bool add_bos_ = true;
  // User-defined pieces, longest text first: cut out of text before encoding.
  std::vector<int32_t> user_defined_;
  std::shared_ptr<const BpeTokenizer> bpe_;
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
