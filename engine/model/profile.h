// The op profiler behind `--profile` / SAMEBITS_PROFILE=1: wall time per op
// category and pass kind, read from std::chrono::steady_clock around whole
// dispatches. It reads clocks only, so turning it on cannot change a bit of
// any result; turned off, it reads no clock at all.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

#include "engine/model/weights.h"

namespace samebits::model {

// Returns the bytes of weights one decoded token reads: its embedding row,
// every layer's attention matrices, norms and router, the FFN (for MoE only
// the `top_k` experts a token uses, plus the shared expert), the output norm
// and the output projection. Decode is bound by streaming these, so this
// over the time per token is the pass's effective bandwidth.
int64_t WeightBytesPerDecodedToken(const ModelWeights& weights);

// What a timed stretch of a forward pass computed. Where the cpu pass fuses
// ops into one dispatch (decode of a parallel block), the fused stretch has
// its own category, so no time is guessed apart.
enum class ProfileOp : uint8_t {
  kEmbed,
  kNorms,
  kQkv,
  kRopeKv,
  kAttention,
  kOProj,
  kRouter,
  kFfn,  // experts or the dense FFN
  kResidual,
  kHead,            // output norm, output projection, logit scale
  kQkvFfnIn,        // fused: q/k/v with the router or the FFN's gate/up
  kAttentionFfnIn,  // fused: attention heads with the experts' gate/up
  kOProjFfnOut,     // fused: o_proj with the FFN's down projection
  kCount
};

// Returns a short name for `op` ("qkv", "attention", ...).
const char* ProfileOpName(ProfileOp op);

enum class PassKind : uint8_t { kPrefill, kDecode, kExtend, kCount };

// Returns "prefill", "decode" or "extend".
const char* PassKindName(PassKind kind);

class Profiler {
 public:
  using Clock = std::chrono::steady_clock;

  // Returns the nanoseconds from `start` to now.
  static int64_t NanosecondsSince(Clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  }

  // Adds `ns` nanoseconds to (`kind`, `op`) and counts one call.
  void Add(PassKind kind, ProfileOp op, int64_t ns);
  // Counts one forward call of `kind` that fed `tokens` tokens.
  void CountPass(PassKind kind, int64_t tokens);
  // Adds the wall time of one whole forward call of `kind`: what the ops'
  // cells do not hold (thread wake-ups, work between timed stretches) is
  // the difference.
  void AddPassTime(PassKind kind, int64_t ns);

  // Returns a table per pass kind: op, total ms, % of the passes' wall time
  // (of the ops' sum when no pass time was added), calls, and ms per pass,
  // with a row for the time between the timed ops; empty when nothing was
  // recorded.
  std::string Report() const;

 private:
  struct Cell {
    int64_t ns = 0;
    int64_t calls = 0;
  };
  std::array<std::array<Cell, static_cast<size_t>(ProfileOp::kCount)>,
             static_cast<size_t>(PassKind::kCount)>
      cells_{};
  std::array<int64_t, static_cast<size_t>(PassKind::kCount)> passes_{};
  std::array<int64_t, static_cast<size_t>(PassKind::kCount)> tokens_{};
  std::array<int64_t, static_cast<size_t>(PassKind::kCount)> pass_ns_{};
};

// Times one stretch of work into a profiler; does nothing (reads no clock)
// when the profiler is null.
class ProfileScope {
 public:
  ProfileScope(Profiler* profiler, PassKind kind, ProfileOp op)
      : profiler_(profiler), kind_(kind), op_(op) {
    if (profiler_ != nullptr) start_ = Profiler::Clock::now();
  }
  ~ProfileScope() {
    if (profiler_ != nullptr) profiler_->Add(kind_, op_, Profiler::NanosecondsSince(start_));
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  Profiler* profiler_;
  PassKind kind_;
  ProfileOp op_;
  Profiler::Clock::time_point start_{};
};

}  // namespace samebits::model
