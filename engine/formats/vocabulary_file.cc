#include "engine/formats/vocabulary_file.h"

#include <cstring>

#include "engine/formats/checkpoint.h"
#include "engine/formats/gguf.h"
#include "engine/formats/gguf_config.h"
#include "engine/formats/mapped_file.h"

namespace samebits::formats {

std::shared_ptr<const Vocabulary> ParseVocabularyFile(std::span<const std::byte> bytes,
                                                      const std::string& label) {
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), "GGUF", 4) == 0) {
    const GgufFile f = ParseGguf(bytes, label);
    auto vocabulary = GgufVocabulary(f, -1);
    if (!vocabulary) {
      const GgufValue* model = f.Find("tokenizer.ggml.model");
      throw CheckpointError(
          label + ": has no vocabulary this engine can tokenize with (tokenizer.ggml.model is " +
          (model == nullptr                   ? std::string("missing")
           : model->type == GgufType::kString ? "'" + model->s + "'"
                                              : "not a string") +
          "; supported: 'llama' (SentencePiece), 'gpt2' (byte-level BPE))");
    }
    return vocabulary;
  }
  return ParseTokenizerBin(bytes, label);
}

std::shared_ptr<const Vocabulary> LoadVocabularyFile(const std::string& path) {
  const auto file = MappedFile::Open(path);
  return ParseVocabularyFile(file->bytes(), path);
}

}  // namespace samebits::formats
