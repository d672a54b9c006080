// The wisdom file: what `samebits-engine tune` measured fastest on one
// machine, as FFTW keeps its wisdom. An entry gives tuning knobs'
// values (model/tuning.h) for one machine (its CPU model, the kernels' ISA
// and the cores online) and one kind of work (the weights' main type, the
// quantized dot profile and the thread count). No knob changes a bit
// (DESIGN.md), so a wisdom file only ever changes speed; `hello` says which
// one a run used.
//
// The file is untrusted input: at most kMaxWisdomBytes, strict JSON, every
// key known, every value checked and bounded; a bad one is refused whole
// with its file and the first fault.
//
//   {"samebits_wisdom": 1,
//    "entries": [{"cpu": "AMD EPYC 9B45", "isa": "avx512", "cores": 2,
//                 "weights": "bf16", "quant_dot": "exact", "threads": 1,
//                 "knobs": {"gemv_chunk_bytes": 65536, ...},
//                 "measured": {...}}]}
//
// `measured` is free-form (what `tune` saw, for people); it is checked
// only to be an object.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/tuning.h"

namespace samebits::run {

inline constexpr size_t kMaxWisdomBytes = size_t{1} << 20;
inline constexpr size_t kMaxWisdomEntries = 4096;
inline constexpr int kWisdomVersion = 1;

class WisdomError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What an entry is for: the machine and the work.
struct WisdomKey {
  std::string cpu;        // platform::Machine::cpu
  std::string isa;        // the kernel table's ISA: "avx512", "neon", ...
  int cores = 0;          // cores online
  std::string weights;    // model::DominantWeightType
  std::string quant_dot;  // "exact" or "int8"
  int threads = 1;
  bool operator==(const WisdomKey&) const = default;
};

struct WisdomEntry {
  WisdomKey key;
  model::KnobValues knobs;  // only knobs tune chose; the rest keep their defaults
  nlohmann::json measured = nlohmann::json::object();
};

struct Wisdom {
  std::vector<WisdomEntry> entries;

  // Returns the entry for `key`, or nullptr.
  const WisdomEntry* Find(const WisdomKey& key) const;
  // Replaces the entry with `entry`'s key, or adds it.
  void Put(WisdomEntry entry);
};

// Returns the wisdom in `text`; `file` names it in errors. Throws WisdomError.
Wisdom ParseWisdom(std::string_view text, const std::string& file);

// Returns the wisdom file at `path`. Throws WisdomError when it cannot be
// read or is not a wisdom file.
Wisdom LoadWisdom(const std::string& path);

// Returns `wisdom` as the file's text (entries in order, two-space indent).
std::string WisdomText(const Wisdom& wisdom);

// Writes `wisdom` to `path` atomically (a temporary file beside it, then a
// rename), creating its folder. Throws WisdomError.
void SaveWisdom(const Wisdom& wisdom, const std::string& path);

// Where a run looks for wisdom when it is not told: $SAMEBITS_WISDOM, else
// $XDG_CACHE_HOME/samebits/wisdom.json, else ~/.cache/samebits/wisdom.json;
// "" when none of those can be formed (no HOME).
std::string DefaultWisdomPath();

// The wisdom a run uses: where it came from and the entry that matched.
struct WisdomChoice {
  std::string file;  // "" when none was read
  std::optional<WisdomEntry> entry;
};

// Resolves `--wisdom`: "none" reads nothing; a path reads that file (which
// must exist); "" reads $SAMEBITS_WISDOM's file (which must exist) or else
// the cache's, when that one exists. Returns
// the entry matching `key`, if any. Throws WisdomError for a file that
// cannot be read or is malformed, named or found.
WisdomChoice ChooseWisdom(const std::string& flag, const WisdomKey& key);

// Returns `hello`'s `tuning` object (PROTOCOL.md): every knob's value in
// use and, when an entry of a wisdom file gave some of them, that file and
// entry's key.
nlohmann::json TuningRecord(const model::KnobValues& knobs, const WisdomChoice& wisdom);

}  // namespace samebits::run
