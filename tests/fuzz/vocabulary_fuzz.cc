// Feeds arbitrary bytes to the tokenizer.bin parser; what parses must
// tokenize and detokenize text (part of the input) without fault.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/formats/checkpoint.h"
#include "engine/formats/vocabulary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace samebits::formats;
  // The first byte says how many of the next bytes are text to tokenize.
  if (size < 1) return 0;
  const size_t text_len = std::min<size_t>(data[0] % 64, size - 1);
  const std::string text(reinterpret_cast<const char*>(data + 1), text_len);
  std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data + 1 + text_len),
                               reinterpret_cast<const std::byte*>(data) + size);
  try {
    const auto v = ParseTokenizerBin(bytes, "fuzz-tokenizer.bin");
    const auto ids = v->Tokenize(text, true);
    v->Detokenize(ids);
    std::vector<int32_t> raw;
    for (size_t i = 0; i + 1 < text.size(); i += 2)
      raw.push_back(static_cast<uint8_t>(text[i]) * 256 + static_cast<uint8_t>(text[i + 1]) - 100);
    v->Detokenize(raw);
  } catch (const CheckpointError&) {
  }
  return 0;
}
