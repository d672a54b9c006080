// A vocabulary on its own, for `samebits-engine tokenize --vocab FILE`: any
// GGUF with `tokenizer.ggml.*` keys (model files and vocabulary-only files
// such as llama.cpp's ggml-vocab-*.gguf, which have no tensors), or a
// llama2.c `tokenizer.bin`.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "engine/formats/vocabulary.h"

namespace samebits::formats {

// Returns the vocabulary in `bytes`: GGUF when they start with its magic,
// otherwise llama2.c's `tokenizer.bin`. Throws CheckpointError naming
// `label` when the file is malformed or a GGUF has no vocabulary this
// engine can tokenize with.
std::shared_ptr<const Vocabulary> ParseVocabularyFile(std::span<const std::byte> bytes,
                                                      const std::string& label);

// Returns the vocabulary in the file at `path` (memory-mapped).
std::shared_ptr<const Vocabulary> LoadVocabularyFile(const std::string& path);

}  // namespace samebits::formats
