// The cache of synthesised checkpoints (synthetic_cache.h).
//
// File layout: the 8 bytes "SBWCACH1", the header's length as a
// little-endian u64, the header (JSON: spec, engine key, weights hash and
// one entry per present tensor in ForEachTensor order: name, quantized,
// type, shape, offset, bytes), then the tensors from the first multiple of
// 4096 after the header, each at its offset (a multiple of 64) from there.
// Bytes are this host's: the engine key pins the file to one executable.
#include "engine/formats/synthetic_cache.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "engine/formats/mapped_file.h"
#include "engine/model/quantized_weights.h"
#include "engine/model/tensor_spec.h"

namespace samebits::formats {
namespace {

using json = nlohmann::json;

constexpr char kMagic[8] = {'S', 'B', 'W', 'C', 'A', 'C', 'H', '1'};
constexpr uint64_t kDataAlign = 4096;
constexpr uint64_t kTensorAlign = 64;
// A header longer than this is not one this engine wrote.
constexpr uint64_t kMaxHeaderBytes = uint64_t{16} << 20;

// Returns whether `type` names a block type (quantized) or a dtype this
// build knows.
bool KnownType(bool quantized, int type) {
  if (!quantized) {
    return type == static_cast<int>(model::DType::kF32) ||
           type == static_cast<int>(model::DType::kF16) ||
           type == static_cast<int>(model::DType::kBF16);
  }
  for (const numerics::QuantLayout& l : numerics::QuantLayouts()) {
    if (static_cast<int>(l.type) == type) return true;
  }
  return false;
}

uint64_t RoundUp(uint64_t n, uint64_t to) {
  return (n + to - 1) / to * to;
}

// Returns the XXH3-64 of this engine's executable as 16 hex digits, or ""
// when it cannot be read.
const std::string& EngineKey() {
  static const std::string key = [] {
    std::ifstream in("/proc/self/exe", std::ios::binary);
    if (!in) return std::string();
    XXH3_state_t* state = XXH3_createState();
    if (state == nullptr) return std::string();
    XXH3_64bits_reset(state);
    std::vector<char> buffer(1 << 20);
    while (in) {
      in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      XXH3_64bits_update(state, buffer.data(), static_cast<size_t>(in.gcount()));
    }
    const uint64_t h = XXH3_64bits_digest(state);
    XXH3_freeState(state);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return std::string(hex);
  }();
  return key;
}

// Returns the weights in the cache file at `path`, or nothing when it is
// missing, not this spec's or this engine's, malformed, or does not hash
// to the weights it claims.
std::optional<model::ModelWeights> ReadCacheFile(const std::string& path, const std::string& spec,
                                                 const model::ModelConfig& config) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  try {
    const std::shared_ptr<const MappedFile> file = MappedFile::Open(path);
    const std::span<const std::byte> bytes = file->bytes();
    if (bytes.size() < 16 || std::memcmp(bytes.data(), kMagic, 8) != 0) return std::nullopt;
    uint64_t header_size = 0;
    for (int i = 0; i < 8; ++i) {
      header_size |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    }
    if (header_size > kMaxHeaderBytes || header_size > bytes.size() - 16) return std::nullopt;
    const json header = json::parse(reinterpret_cast<const char*>(bytes.data()) + 16,
                                    reinterpret_cast<const char*>(bytes.data()) + 16 + header_size);
    if (header.value("spec", "") != spec || header.value("engine", "") != EngineKey()) {
      return std::nullopt;
    }
    const uint64_t data_start = RoundUp(16 + header_size, kDataAlign);
    if (data_start > bytes.size()) return std::nullopt;
    const uint64_t data_size = bytes.size() - data_start;
    const json& tensors = header.at("tensors");
    model::ModelWeights w;
    w.config = config;
    w.layers.resize(config.layers.size());
    size_t next = 0;
    bool fits = true;
    model::ForEachTensor(config, [&](const model::TensorSpec& s) {
      if (!fits || next >= tensors.size() || tensors[next].at("name") != s.name) return;
      const json& t = tensors[next++];
      const std::vector<int64_t> shape = t.at("shape").get<std::vector<int64_t>>();
      const uint64_t offset = t.at("offset").get<uint64_t>();
      const uint64_t size = t.at("bytes").get<uint64_t>();
      if (shape != s.shape || offset % kTensorAlign != 0 || offset > data_size ||
          size > data_size - offset) {
        fits = false;
        return;
      }
      const std::byte* data = bytes.data() + data_start + offset;
      const int type = t.at("type").get<int>();
      const bool quantized = t.at("quantized").get<bool>();
      if (!KnownType(quantized, type)) {
        fits = false;
        return;
      }
      model::TensorView view;
      if (quantized) {
        view = model::QuantizedView(static_cast<numerics::QuantType>(type), shape, data);
      } else {
        view.dtype = static_cast<model::DType>(type);
        view.shape = shape;
        view.data = data;
      }
      // A type this build does not know, or bytes that are not the
      // tensor's, are not used.
      if (view.bytes() != size) {
        fits = false;
        return;
      }
      s.slot(w) = std::move(view);
    });
    if (!fits || next != tensors.size() || !model::CheckWeights(w).empty()) return std::nullopt;
    w.storage = file;
    if (model::HashWeights(w) != header.value("weights_xxh3", "")) return std::nullopt;
    return w;
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable or malformed: a miss
  }
}

// Writes `w` as the cache file `path` (under a temporary name, then
// renamed). Failures leave no file.
void WriteCacheFile(const std::string& path, const std::string& spec,
                    const model::ModelWeights& w) {
  model::ModelWeights& weights = const_cast<model::ModelWeights&>(w);  // slots only read
  json tensors = json::array();
  std::vector<std::pair<const std::byte*, size_t>> parts;
  uint64_t offset = 0;
  model::ForEachTensor(w.config, [&](const model::TensorSpec& s) {
    if (s.layer >= static_cast<int>(w.layers.size())) return;
    const model::TensorView& v = s.slot(weights);
    if (!v.present()) return;
    const size_t size = v.bytes();
    tensors.push_back(
        {{"name", s.name},
         {"quantized", v.quantized},
         {"type", v.quantized ? static_cast<int>(v.quant_type) : static_cast<int>(v.dtype)},
         {"shape", v.shape},
         {"offset", offset},
         {"bytes", size}});
    parts.emplace_back(v.data, size);
    offset = RoundUp(offset + size, kTensorAlign);
  });
  const std::string header = json{
      {"spec", spec},
      {"engine", EngineKey()},
      {"weights_xxh3", model::HashWeights(w)},
      {"tensors", tensors}}.dump();
  std::string temp = path + ".XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return;
  FILE* out = ::fdopen(fd, "wb");
  if (out == nullptr) {
    ::close(fd);
    ::unlink(temp.c_str());
    return;
  }
  bool ok = std::fwrite(kMagic, 1, 8, out) == 8;
  unsigned char size_le[8];
  for (int i = 0; i < 8; ++i) size_le[i] = static_cast<unsigned char>(header.size() >> (8 * i));
  ok = ok && std::fwrite(size_le, 1, 8, out) == 8;
  ok = ok && std::fwrite(header.data(), 1, header.size(), out) == header.size();
  const std::vector<char> zeros(kDataAlign, 0);
  uint64_t written = 16 + header.size();
  auto pad_to = [&](uint64_t to) {
    while (ok && written < to) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(to - written, zeros.size()));
      ok = std::fwrite(zeros.data(), 1, n, out) == n;
      written += n;
    }
  };
  const uint64_t data_start = RoundUp(written, kDataAlign);
  pad_to(data_start);
  for (const auto& [data, size] : parts) {
    pad_to(RoundUp(written - data_start, kTensorAlign) + data_start);
    ok = ok && std::fwrite(data, 1, size, out) == size;
    written += size;
  }
  ok = (std::fclose(out) == 0) && ok;
  if (!ok || std::rename(temp.c_str(), path.c_str()) != 0) ::unlink(temp.c_str());
}

}  // namespace

std::string SyntheticCachePath(const std::string& spec, const std::string& dir) {
  if (EngineKey().empty()) return "";
  std::string name;
  for (const char c : spec) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_';
    name += plain ? c : '_';
  }
  return (std::filesystem::path(dir) / (name + "." + EngineKey() + ".weights")).string();
}

model::ModelWeights LoadSyntheticCached(const std::string& spec, const model::ModelConfig& config,
                                        const std::string& dir,
                                        const std::function<model::ModelWeights()>& synthesise) {
  const std::string path = SyntheticCachePath(spec, dir);
  if (path.empty()) return synthesise();
  if (std::optional<model::ModelWeights> cached = ReadCacheFile(path, spec, config)) {
    return std::move(*cached);
  }
  model::ModelWeights w = synthesise();
  WriteCacheFile(path, spec, w);
  return w;
}

}  // namespace samebits::formats
