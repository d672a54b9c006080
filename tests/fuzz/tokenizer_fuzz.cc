// Feeds arbitrary text (random UTF-8, invalid UTF-8, long runs) to every
// tokenizer: llama.cpp's vocabularies from $SAMEBITS_VOCAB_DIR (ci/fuzz.sh
// points it at ../shared/vocab) and two tiny built-in ones, so that the
// target also works without files. The first byte picks the vocabulary and
// whether BOS is added; the rest is the text. Beyond "no fault", it checks
// what must hold for any text: every id is in range, and decoding gives the
// text back where the vocabulary can represent it (byte-level BPE always;
// SentencePiece with all 256 byte pieces, unless user-defined pieces, which
// llama.cpp follows with a prefix space, were cut out).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/formats/bpe_tokenizer.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/vocabulary.h"
#include "engine/formats/vocabulary_file.h"

namespace {

using samebits::formats::Piece;
using samebits::formats::PieceType;
using samebits::formats::TokenizerModel;
using samebits::formats::Vocabulary;
using samebits::formats::VocabularyOptions;

struct Subject {
  std::shared_ptr<const Vocabulary> vocabulary;
  bool decodes_every_text = false;
};

// A byte-level BPE vocabulary of the 256 byte pieces and a few merges.
std::shared_ptr<const Vocabulary> TinyBpe() {
  std::vector<Piece> pieces;
  for (int b = 0; b < 256; ++b)
    pieces.push_back(
        {samebits::formats::ByteStandIn(static_cast<uint8_t>(b)), 0.0f, PieceType::kNormal});
  VocabularyOptions options;
  options.model = TokenizerModel::kBytePairEncoding;
  options.pre = "llama-bpe";
  options.merges = {"Ġ t", "h e", "Ġt he", "a b", "ab ab"};
  for (const char* merged : {"Ġt", "he", "Ġthe", "ab", "abab"})
    pieces.push_back({merged, 0.0f, PieceType::kNormal});
  pieces.push_back({"<|end|>", 0.0f, PieceType::kControl});
  pieces.push_back({"<tool>", 0.0f, PieceType::kUserDefined});
  options.eos_id = static_cast<int32_t>(pieces.size()) - 2;
  return std::make_shared<const Vocabulary>(std::move(pieces), std::move(options), "tiny-bpe");
}

// A SentencePiece vocabulary without byte pieces: unknown characters become <unk>.
std::shared_ptr<const Vocabulary> TinySpm() {
  std::vector<Piece> pieces = {{"<unk>", 0, PieceType::kUnknown}, {"<s>", 0, PieceType::kControl},
                               {"</s>", 0, PieceType::kControl},  {"▁", -1, PieceType::kNormal},
                               {"a", -2, PieceType::kNormal},     {"b", -2, PieceType::kNormal},
                               {"▁a", -1, PieceType::kNormal},    {"ab", -1, PieceType::kNormal},
                               {"▁ab", -0.5f, PieceType::kNormal}};
  return std::make_shared<const Vocabulary>(std::move(pieces), 1, 2, "tiny-spm");
}

bool HasAllBytePieces(const Vocabulary& v) {
  int bytes = 0;
  for (const Piece& p : v.pieces()) bytes += p.type == PieceType::kByte ? 1 : 0;
  return bytes >= 256;
}

std::vector<Subject>& Subjects() {
  static std::vector<Subject> subjects = [] {
    std::vector<Subject> s;
    s.push_back({TinyBpe(), true});
    s.push_back({TinySpm(), false});
    const char* dir = std::getenv("SAMEBITS_VOCAB_DIR");
    if (dir != nullptr) {
      for (const char* name : {"gpt-2", "llama-bpe", "qwen2", "llama-spm", "phi-3"}) {
        const std::string path = std::string(dir) + "/ggml-vocab-" + name + ".gguf";
        if (!std::filesystem::exists(path)) continue;
        auto v = samebits::formats::LoadVocabularyFile(path);
        const bool all = v->model() == TokenizerModel::kBytePairEncoding || HasAllBytePieces(*v);
        s.push_back({std::move(v), all});
      }
    }
    return s;
  }();
  return subjects;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Subjects();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const auto& subjects = Subjects();
  const Subject& subject = subjects[(data[0] >> 1) % subjects.size()];
  const bool add_bos = data[0] & 1;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  const Vocabulary& v = *subject.vocabulary;
  const std::vector<int32_t> ids = v.Tokenize(text, add_bos);
  bool user_defined = false;
  for (int32_t id : ids) {
    if (id < 0 || id >= v.size()) __builtin_trap();
    user_defined = user_defined || v.piece(id).type == PieceType::kUserDefined;
  }
  const std::string decoded = v.Detokenize(ids);
  const bool checkable = subject.decodes_every_text &&
                         (v.model() == TokenizerModel::kBytePairEncoding || !user_defined);
  if (checkable && decoded != text) __builtin_trap();
  // Arbitrary ids (in range or not) decode without fault.
  std::vector<int32_t> raw;
  for (size_t i = 1; i + 3 < size && raw.size() < 64; i += 4) {
    int32_t id;
    __builtin_memcpy(&id, data + i, 4);
    raw.push_back(id % (v.size() + 8));
  }
  v.Detokenize(raw);
  return 0;
}
