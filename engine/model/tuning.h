// The cpu pass's tuning knobs: the choices of how its work is cut that can
// change its speed but, by the numeric contract (DESIGN.md: chunking,
// tiling and thread split never change a bit), never a result. They are
// listed once here; the command-line flags of `run`, `bench` and `tune`, the
// wisdom file (engine/run/wisdom.h), `hello`'s `tuning` object and the
// profile's axes (engines/samebits.json, tested against this list) all
// come from it.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "engine/model/forward.h"
#include "engine/model/weights.h"

namespace samebits::model {

// Which timing a knob moves, and so what `tune` times to choose it.
enum class TunedPhase : uint8_t { kDecode, kPrefill };

struct TuningKnob {
  std::string_view name;  // "gemv_chunk_bytes": the wisdom's and hello's key
  std::string_view flag;  // "--gemv-chunk-bytes"
  std::string_view help;  // what it cuts, for --help
  int64_t min = 1, max = 1;
  TunedPhase phase = TunedPhase::kDecode;
  // The values `tune` tries, today's default among them.
  std::span<const int64_t> candidates;
  int64_t CpuOptions::*field = nullptr;
  // Whether only the loops over block-quantized weights read it (`tune` on
  // F32, F16 or BF16 weights leaves it at its value and spends no time on
  // it).
  bool quantized_only = false;
};

// Every knob, in a fixed order.
std::span<const TuningKnob> TuningKnobs();

// Returns the knob named `name`, or nullptr.
const TuningKnob* FindTuningKnob(std::string_view name);

// Knob values by name, as flags, a wisdom entry or `tune` give them.
using KnobValues = std::map<std::string, int64_t>;

// Returns every knob's value in `options`.
KnobValues KnobsOf(const CpuOptions& options);

// Returns `knobs` for people: "attention_row_block 16, gemm_tile_m 64, ...".
std::string KnobsText(const KnobValues& knobs);

// Sets the knobs `values` names in `options`. Throws std::invalid_argument
// for a name that is no knob or a value outside its range.
void ApplyKnobs(const KnobValues& values, CpuOptions& options);

// Returns the type most of the model's matrix bytes are stored in, as the
// wisdom keys entries by it, in lower case as `export --type` spells it:
// "f32", "f16", "bf16", or ggml's block name ("q8_0", "q4_k", ...). A
// Q4_K_M file, mostly Q4_K with some Q6_K, is "q4_k"; "none" when the
// model has no matrices.
std::string DominantWeightType(const ModelWeights& weights);

// Returns whether any of the model's matrices is block-quantized (so the
// integer profile's loops, and the knobs only they read, run on it).
bool HasQuantizedMatrices(const ModelWeights& weights);

}  // namespace samebits::model
