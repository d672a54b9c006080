// GGUF (llama.cpp's checkpoint format), versions 2 and 3: parsing of the
// header, the metadata and the tensor table from untrusted bytes, and the
// mapping of the architectures architectures.h lists onto `ModelConfig`. Keys under `samebits.*`
// (written by our own exporter, gguf_writer.h) carry features llama.cpp has no key for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/model/weights.h"

namespace samebits::formats {

enum class GgufType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

// Returns "uint32", "string", "array", ... ("type N" for an unknown value).
std::string GgufTypeName(GgufType type);

// One metadata value. Integers land in `u` (unsigned types) or `i` (signed
// types), floats in `f`, booleans in `b`, strings in `s`, arrays in `items`
// (all of type `elem`).
struct GgufValue {
  GgufType type = GgufType::kU8;
  uint64_t u = 0;
  int64_t i = 0;
  double f = 0.0;
  bool b = false;
  std::string s;
  GgufType elem = GgufType::kU8;
  std::vector<GgufValue> items;
};

// ggml tensor types the loader knows by name. F32, F16 and BF16 load as
// they are; the block-quantized types of numerics::QuantLayouts() (Q8_0,
// Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K) load dequantized; any other is
// refused by name.
inline constexpr uint32_t kGgmlF32 = 0, kGgmlF16 = 1, kGgmlBF16 = 30;

// Returns ggml's name of a tensor type ("Q4_K", "IQ2_XXS", "type 99").
std::string GgmlTypeName(uint32_t ggml_type);

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> ne;  // GGUF order: ne[0] is the row length
  uint32_t ggml_type = 0;
  uint64_t offset = 0;  // from the start of the data section
  uint64_t nbytes = 0;
};

struct GgufFile {
  std::string label;
  uint32_t version = 0;
  std::map<std::string, GgufValue> metadata;
  std::vector<std::string> key_order;  // keys in file order
  std::vector<GgufTensorInfo> tensors;
  uint64_t alignment = 32;
  uint64_t data_offset = 0;  // absolute offset of the data section

  // Returns the value of `key`, or null.
  const GgufValue* Find(const std::string& key) const;
};

// Returns the parsed header, metadata and tensor table of `bytes`. Every
// count, length, dimension and offset is checked against the bytes that
// are there; tensors must be of a supported type (a quantized tensor's rows
// a whole number of blocks), aligned, inside the file.
// Throws CheckpointError naming `label`.
GgufFile ParseGguf(std::span<const std::byte> bytes, const std::string& label);

// Returns the weights (and vocabulary, when the file has a SentencePiece
// one) described by GGUF `bytes`. The views point into `bytes`, which
// `keep_alive` must own. Throws CheckpointError naming `label`.
model::ModelWeights LoadGgufBytes(std::span<const std::byte> bytes,
                                  std::shared_ptr<const void> keep_alive, const std::string& label);

// Returns the weights of the GGUF file at `path` (memory-mapped).
model::ModelWeights LoadGgufFile(const std::string& path);

}  // namespace samebits::formats
