#include "engine/model/tuning.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>

#include "engine/numerics/quant_blocks.h"

namespace samebits::model {
namespace {

constexpr int64_t kKiB = 1024;
// Decode's unit of work: from a few rows of a wide matrix to whole ones.
constexpr std::array<int64_t, 8> kGemvChunks = {16 * kKiB,  32 * kKiB,  64 * kKiB,   128 * kKiB,
                                                256 * kKiB, 512 * kKiB, 1024 * kKiB, 4096 * kKiB};
constexpr std::array<int64_t, 4> kTileTokens = {16, 32, 64, 128};
constexpr std::array<int64_t, 5> kTileRows = {16, 32, 64, 128, 256};
constexpr std::array<int64_t, 5> kAttentionRows = {4, 8, 16, 32, 64};
// The prefetch distance over quantized weights: 4 KiB was best on the Intel
// Xeon it was chosen on (stream_prefetch.h); other memory systems differ,
// and on some (an AMD Zen 5's Q8_0) no hints are best: 1 byte, below a
// cache line, issues none.
constexpr std::array<int64_t, 6> kStreamAhead = {1,        1 * kKiB, 2 * kKiB,
                                                 4 * kKiB, 8 * kKiB, 16 * kKiB};
// The most rows a tile or an attention unit may hold: far above any useful
// value, small enough for an int.
constexpr int64_t kMostRows = 4096;

constexpr std::array<TuningKnob, 5> kKnobs = {{
    {"gemv_chunk_bytes", "--gemv-chunk-bytes",
     "Bytes of weights per GEMV work unit (decode), rounded to whole rows", 1, int64_t{1} << 40,
     TunedPhase::kDecode, kGemvChunks, &CpuOptions::gemv_chunk_bytes},
    {"gemm_tile_m", "--gemm-tile-m", "Tokens per GEMM work unit (prefill)", 1, kMostRows,
     TunedPhase::kPrefill, kTileTokens, &CpuOptions::gemm_tile_m},
    {"gemm_tile_n", "--gemm-tile-n", "Weight rows per GEMM work unit (prefill)", 1, kMostRows,
     TunedPhase::kPrefill, kTileRows, &CpuOptions::gemm_tile_n},
    {"attention_row_block", "--attention-row-block", "Query rows per attention work unit (prefill)",
     1, kMostRows, TunedPhase::kPrefill, kAttentionRows, &CpuOptions::attention_row_block},
    {"stream_ahead_bytes", "--stream-ahead-bytes",
     "Bytes ahead of the weights being read that the integer profile (--quant-dot int8) hints "
     "into cache; below 64, no hints on quantized weights in either profile (the hardware "
     "prefetcher alone)",
     kernels::kMinStreamAheadBytes, kernels::kMaxStreamAheadBytes, TunedPhase::kDecode,
     kStreamAhead, &CpuOptions::stream_ahead_bytes, /*quantized_only=*/true},
}};

// The matrices of a layer, as WeightBytesPerDecodedToken lists them.
std::array<const TensorView*, 13> LayerMatrices(const LayerWeights& w) {
  return {&w.wq,          &w.wk,        &w.wv,          &w.wo,        &w.ffn_gate,
          &w.ffn_up,      &w.ffn_down,  &w.expert_gate, &w.expert_up, &w.expert_down,
          &w.shared_gate, &w.shared_up, &w.shared_down};
}

}  // namespace

std::span<const TuningKnob> TuningKnobs() {
  return kKnobs;
}

const TuningKnob* FindTuningKnob(std::string_view name) {
  for (const TuningKnob& k : kKnobs) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

KnobValues KnobsOf(const CpuOptions& options) {
  KnobValues values;
  for (const TuningKnob& k : kKnobs) values[std::string(k.name)] = options.*k.field;
  return values;
}

std::string KnobsText(const KnobValues& knobs) {
  std::string text;
  for (const auto& [name, value] : knobs) {
    text += text.empty() ? "" : ", ";
    text += name + " " + std::to_string(value);
  }
  return text;
}

void ApplyKnobs(const KnobValues& values, CpuOptions& options) {
  for (const auto& [name, value] : values) {
    const TuningKnob* knob = FindTuningKnob(name);
    if (knob == nullptr) throw std::invalid_argument("no tuning knob is named '" + name + "'");
    if (value < knob->min || value > knob->max) {
      throw std::invalid_argument(name + " " + std::to_string(value) + " is outside [" +
                                  std::to_string(knob->min) + ", " + std::to_string(knob->max) +
                                  "]");
    }
    options.*knob->field = value;
  }
}

std::string DominantWeightType(const ModelWeights& weights) {
  std::map<std::string, int64_t> bytes;
  for (const LayerWeights& layer : weights.layers) {
    for (const TensorView* t : LayerMatrices(layer)) {
      if (!t->present()) continue;
      std::string type =
          t->quantized ? numerics::LayoutOf(t->quant_type).name : numerics::DTypeName(t->dtype);
      for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      bytes[type] += static_cast<int64_t>(t->bytes());
    }
  }
  if (bytes.empty()) return "none";
  return std::max_element(bytes.begin(), bytes.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

bool HasQuantizedMatrices(const ModelWeights& weights) {
  for (const LayerWeights& layer : weights.layers) {
    for (const TensorView* t : LayerMatrices(layer)) {
      if (t->present() && t->quantized) return true;
    }
  }
  return false;
}

}  // namespace samebits::model
