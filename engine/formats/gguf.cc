#include "engine/formats/gguf.h"

#include <limits>

#include "engine/formats/byte_reader.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/gguf_config.h"
#include "engine/formats/mapped_file.h"
#include "engine/formats/tensor_table.h"
#include "engine/numerics/quant_blocks.h"

namespace samebits::formats {
namespace {

// Nested arrays deeper than this are refused, so that a hostile file cannot
// exhaust the stack through recursion.
constexpr int kMaxArrayDepth = 4;
// Longer keys and tensor names than this are refused as implausible.
constexpr uint64_t kMaxNameLength = 1 << 16;

// Returns the smallest encoding of one value of `type` in bytes, used to
// bound a declared element count by the bytes that remain.
uint64_t MinValueSize(GgufType type) {
  switch (type) {
    case GgufType::kU8:
    case GgufType::kI8:
    case GgufType::kBool:
      return 1;
    case GgufType::kU16:
    case GgufType::kI16:
      return 2;
    case GgufType::kU32:
    case GgufType::kI32:
    case GgufType::kF32:
      return 4;
    case GgufType::kU64:
    case GgufType::kI64:
    case GgufType::kF64:
      return 8;
    case GgufType::kString:
      return 8;
    case GgufType::kArray:
      return 12;
  }
  return 1;
}

bool KnownType(uint32_t t) {
  return t <= static_cast<uint32_t>(GgufType::kF64);
}

std::string ReadString(ByteReader& r, const char* what) {
  const uint64_t n = r.U64(what);
  if (n > r.remaining()) {
    r.Fail(std::string(what) + " declares " + std::to_string(n) + " bytes but only " +
           std::to_string(r.remaining()) + " remain");
  }
  return std::string(r.Bytes(n, what));
}

GgufValue ReadValue(ByteReader& r, GgufType type, int depth, const std::string& key) {
  GgufValue v;
  v.type = type;
  switch (type) {
    case GgufType::kU8:
      v.u = r.U8("a uint8 value");
      break;
    case GgufType::kI8:
      v.i = static_cast<int8_t>(r.U8("an int8 value"));
      break;
    case GgufType::kU16:
      v.u = r.U16("a uint16 value");
      break;
    case GgufType::kI16:
      v.i = static_cast<int16_t>(r.U16("an int16 value"));
      break;
    case GgufType::kU32:
      v.u = r.U32("a uint32 value");
      break;
    case GgufType::kI32:
      v.i = r.I32("an int32 value");
      break;
    case GgufType::kU64:
      v.u = r.U64("a uint64 value");
      break;
    case GgufType::kI64:
      v.i = static_cast<int64_t>(r.U64("an int64 value"));
      break;
    case GgufType::kF32:
      v.f = r.F32("a float32 value");
      break;
    case GgufType::kF64:
      v.f = r.F64("a float64 value");
      break;
    case GgufType::kBool: {
      const uint8_t b = r.U8("a bool value");
      if (b > 1)
        r.Fail("metadata key '" + key + "': bool value " + std::to_string(b) + " is not 0 or 1");
      v.b = b != 0;
      break;
    }
    case GgufType::kString:
      v.s = ReadString(r, "a string value");
      break;
    case GgufType::kArray: {
      if (depth >= kMaxArrayDepth) r.Fail("metadata key '" + key + "': arrays nested too deeply");
      const uint32_t elem = r.U32("an array's element type");
      if (!KnownType(elem)) {
        r.Fail("metadata key '" + key + "': unknown array element type " + std::to_string(elem));
      }
      v.elem = static_cast<GgufType>(elem);
      const uint64_t count = r.U64("an array's length");
      if (count > r.remaining() / MinValueSize(v.elem)) {
        r.Fail("metadata key '" + key + "': array of " + std::to_string(count) + " " +
               GgufTypeName(v.elem) + " values cannot fit in the " + std::to_string(r.remaining()) +
               " bytes that remain");
      }
      v.items.reserve(count);
      for (uint64_t k = 0; k < count; ++k) v.items.push_back(ReadValue(r, v.elem, depth + 1, key));
      break;
    }
  }
  return v;
}

// Returns the size of one element of a plain (unquantized) ggml type, or 0.
uint64_t GgmlTypeSize(uint32_t t) {
  switch (t) {
    case kGgmlF32:
      return 4;
    case kGgmlF16:
      return 2;
    case kGgmlBF16:
      return 2;
    default:
      return 0;
  }
}

// Returns "F32, F16, BF16, Q8_0, ..." for messages.
std::string SupportedTypeList() {
  std::string s = "F32, F16, BF16";
  for (const numerics::QuantLayout& l : numerics::QuantLayouts()) s += std::string(", ") + l.name;
  return s;
}

}  // namespace

std::string GgmlTypeName(uint32_t t) {
  static const char* const kNames[] = {
      "F32",     "F16",    "Q4_0",    "Q4_1",  "",       "",      "Q5_0",  "Q5_1",
      "Q8_0",    "Q8_1",   "Q2_K",    "Q3_K",  "Q4_K",   "Q5_K",  "Q6_K",  "Q8_K",
      "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS",
      "I8",      "I16",    "I32",     "I64",   "F64",    "IQ1_M", "BF16",  "",
      "",        "",       "TQ1_0",   "TQ2_0", "",       "",      "",      "MXFP4"};
  // An unknown number reads "has type 99 (unknown)", not "has type type 99".
  if (t < std::size(kNames) && *kNames[t] != '\0') return kNames[t];
  return std::to_string(t) + " (unknown)";
}

std::string GgufTypeName(GgufType type) {
  static const char* const kNames[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                       "int32",  "float32", "bool",   "string", "array",
                                       "uint64", "int64",   "float64"};
  const auto t = static_cast<uint32_t>(type);
  if (t < std::size(kNames)) return kNames[t];
  return std::to_string(t) + " (unknown)";
}

const GgufValue* GgufFile::Find(const std::string& key) const {
  const auto it = metadata.find(key);
  return it == metadata.end() ? nullptr : &it->second;
}

namespace {

// The steps of ParseGguf, in the order the file holds its parts.

struct HeaderCounts {
  uint64_t tensors = 0;
  uint64_t metadata = 0;
};

// Reads the magic, the version (2 or 3) and the two counts, each bounded by
// the bytes left for it.
HeaderCounts ReadHeader(ByteReader& r, std::span<const std::byte> bytes, const std::string& label,
                        GgufFile& f) {
  if (bytes.size() < 4 ||
      std::string_view(reinterpret_cast<const char*>(bytes.data()), 4) != "GGUF") {
    throw CheckpointError(label + ": not a GGUF file (the first 4 bytes are not 'GGUF')");
  }
  r.Bytes(4, "the magic");
  f.version = r.U32("the version");
  if (f.version == 1) {
    r.Fail("GGUF version 1 is not supported (it predates 64-bit counts); convert the file again");
  }
  if (f.version != 2 && f.version != 3) {
    r.Fail("unsupported GGUF version " + std::to_string(f.version) +
           " (versions 2 and 3 are read)");
  }
  HeaderCounts n;
  n.tensors = r.U64("the tensor count");
  n.metadata = r.U64("the metadata count");
  // A key-value pair takes at least 13 bytes and a tensor info at least 32.
  if (n.metadata > r.remaining() / 13) {
    r.Fail("metadata count " + std::to_string(n.metadata) + " cannot fit in a file of " +
           std::to_string(bytes.size()) + " bytes");
  }
  if (n.tensors > r.remaining() / 32) {
    r.Fail("tensor count " + std::to_string(n.tensors) + " cannot fit in a file of " +
           std::to_string(bytes.size()) + " bytes");
  }
  return n;
}

// Reads `n_kv` key-value pairs into `f.metadata`, in file order.
void ReadMetadata(ByteReader& r, uint64_t n_kv, GgufFile& f) {
  for (uint64_t k = 0; k < n_kv; ++k) {
    std::string key = ReadString(r, "a metadata key");
    if (key.empty() || key.size() > kMaxNameLength) {
      r.Fail("metadata key " + std::to_string(k) + " has length " + std::to_string(key.size()));
    }
    const uint32_t type = r.U32("a metadata value type");
    if (!KnownType(type)) {
      r.Fail("metadata key '" + key + "' has unknown value type " + std::to_string(type));
    }
    GgufValue v = ReadValue(r, static_cast<GgufType>(type), 0, key);
    if (f.metadata.count(key) != 0) r.Fail("metadata key '" + key + "' appears twice");
    f.key_order.push_back(key);
    f.metadata.emplace(std::move(key), std::move(v));
  }
}

// Sets `f.alignment` from general.alignment, when the file sets it.
void ReadAlignment(const std::string& label, GgufFile& f) {
  const GgufValue* a = f.Find("general.alignment");
  if (a == nullptr) return;
  if (a->type != GgufType::kU32) {
    throw CheckpointError(label + ": metadata key 'general.alignment' has type " +
                          GgufTypeName(a->type) + ", expected uint32");
  }
  if (a->u == 0 || (a->u & (a->u - 1)) != 0) {
    throw CheckpointError(label + ": general.alignment is " + std::to_string(a->u) +
                          ", not a power of two");
  }
  f.alignment = a->u;
}

// Returns the byte size of tensor `t` (its dimensions read), checking that
// its type is supported, its rows hold whole blocks and nothing overflows.
uint64_t TensorBytes(const ByteReader& r, const std::string& label, const GgufTensorInfo& t,
                     uint64_t elements) {
  const uint64_t elem_size = GgmlTypeSize(t.ggml_type);
  const numerics::QuantLayout* quant = numerics::FindQuantByGgmlType(t.ggml_type);
  if (elem_size == 0 && quant == nullptr) {
    r.Fail("tensor '" + t.name + "' has type " + GgmlTypeName(t.ggml_type) +
           ", which is not supported (" + SupportedTypeList() + " are)");
  }
  const std::string what = "the size of tensor '" + EscapeControlBytes(t.name) + "'";
  uint64_t nbytes;
  if (quant != nullptr) {
    // A row must be a whole number of blocks: ggml never splits a block
    // across rows, and a partial block would read past the row.
    if (t.ne[0] % static_cast<uint64_t>(quant->block_elements) != 0) {
      r.Fail("tensor '" + t.name + "' has type " + quant->name + " but its rows hold " +
             std::to_string(t.ne[0]) + " weights, not a multiple of the " +
             std::to_string(quant->block_elements) + "-weight block");
    }
    nbytes = CheckedMul(elements / static_cast<uint64_t>(quant->block_elements),
                        static_cast<uint64_t>(quant->block_bytes), label, what.c_str());
  } else {
    nbytes = CheckedMul(elements, elem_size, label, what.c_str());
  }
  if (nbytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    r.Fail("tensor '" + t.name + "' is too large");
  }
  return nbytes;
}

// Reads tensor info `k`: its name (unique), dimensions, type, size and
// offset. `seen` holds the names read so far.
GgufTensorInfo ReadTensorInfo(ByteReader& r, const std::string& label, uint64_t k,
                              std::map<std::string, bool>& seen) {
  GgufTensorInfo t;
  t.name = ReadString(r, "a tensor name");
  if (t.name.empty() || t.name.size() > kMaxNameLength) {
    r.Fail("tensor " + std::to_string(k) + " has a name of length " +
           std::to_string(t.name.size()));
  }
  if (seen.count(t.name) != 0) r.Fail("tensor '" + t.name + "' appears twice");
  seen[t.name] = true;
  const uint32_t n_dims = r.U32("a tensor's dimension count");
  if (n_dims < 1 || n_dims > 4) {
    r.Fail("tensor '" + t.name + "' has " + std::to_string(n_dims) +
           " dimensions (1 to 4 allowed)");
  }
  uint64_t elements = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    const uint64_t ne = r.U64("a tensor dimension");
    if (ne == 0 || ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      r.Fail("tensor '" + t.name + "' has dimension " + std::to_string(d) + " of " +
             std::to_string(ne));
    }
    t.ne.push_back(ne);
    elements =
        CheckedMul(elements, ne, label,
                   ("the element count of tensor '" + EscapeControlBytes(t.name) + "'").c_str());
  }
  t.ggml_type = r.U32("a tensor type");
  t.nbytes = TensorBytes(r, label, t, elements);
  t.offset = r.U64("a tensor offset");
  return t;
}

// Places the data section at the next multiple of the alignment after the
// header, and checks that every tensor is aligned and inside it.
void PlaceDataSection(const ByteReader& r, std::span<const std::byte> bytes,
                      const std::string& label, GgufFile& f) {
  const uint64_t end_of_header = r.offset();
  const uint64_t padded = CheckedAdd(end_of_header, f.alignment - 1, label, "the data offset");
  f.data_offset = padded - padded % f.alignment;
  if (!f.tensors.empty() && f.data_offset > bytes.size()) {
    throw CheckpointError(label + ": the data section would start at byte " +
                          std::to_string(f.data_offset) + ", past the end of the " +
                          std::to_string(bytes.size()) + "-byte file");
  }
  const uint64_t data_size = f.data_offset <= bytes.size() ? bytes.size() - f.data_offset : 0;
  for (const GgufTensorInfo& t : f.tensors) {
    if (t.offset % f.alignment != 0) {
      throw CheckpointError(label + ": tensor '" + t.name + "' starts at data offset " +
                            std::to_string(t.offset) + ", not a multiple of the alignment " +
                            std::to_string(f.alignment));
    }
    if (t.offset > data_size || t.nbytes > data_size - t.offset) {
      throw CheckpointError(label + ": tensor '" + t.name + "' (" + std::to_string(t.nbytes) +
                            " bytes at data offset " + std::to_string(t.offset) +
                            ") extends past the end of the file (data section of " +
                            std::to_string(data_size) + " bytes)");
    }
  }
}

}  // namespace

GgufFile ParseGguf(std::span<const std::byte> bytes, const std::string& label) {
  GgufFile f;
  f.label = label;
  ByteReader r(bytes, label);
  const HeaderCounts n = ReadHeader(r, bytes, label, f);
  ReadMetadata(r, n.metadata, f);
  ReadAlignment(label, f);
  std::map<std::string, bool> seen;
  f.tensors.reserve(n.tensors);
  for (uint64_t k = 0; k < n.tensors; ++k) f.tensors.push_back(ReadTensorInfo(r, label, k, seen));
  PlaceDataSection(r, bytes, label, f);
  return f;
}

model::ModelWeights LoadGgufBytes(std::span<const std::byte> bytes,
                                  std::shared_ptr<const void> keep_alive,
                                  const std::string& label) {
  const GgufFile f = ParseGguf(bytes, label);
  const model::ModelConfig config = GgufToConfig(f);
  CheckConfig(config, label);
  TensorTable table;
  for (const GgufTensorInfo& t : f.tensors) {
    FileTensor ft;
    if (const numerics::QuantLayout* quant = numerics::FindQuantByGgmlType(t.ggml_type)) {
      ft.quantized = true;
      ft.quant_type = quant->type;
    } else {
      ft.dtype = t.ggml_type == kGgmlF32   ? model::DType::kF32
                 : t.ggml_type == kGgmlF16 ? model::DType::kF16
                                           : model::DType::kBF16;
    }
    // GGUF lists the innermost dimension first; the engine the outermost.
    for (auto it = t.ne.rbegin(); it != t.ne.rend(); ++it)
      ft.shape.push_back(static_cast<int64_t>(*it));
    ft.data = bytes.data() + f.data_offset + t.offset;
    table.emplace(t.name, std::move(ft));
  }
  auto storage = std::make_shared<LoadedStorage>();
  storage->files.push_back(std::move(keep_alive));
  model::ModelWeights w = BindTensors(config, table, label, storage);
  w.vocabulary = GgufVocabulary(f, config.vocab_size);
  return w;
}

model::ModelWeights LoadGgufFile(const std::string& path) {
  const auto file = MappedFile::Open(path);
  return LoadGgufBytes(file->bytes(), file, path);
}

}  // namespace samebits::formats
