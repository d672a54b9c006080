// The cpu forward pass against the reference, bit for bit (memcmp of every
// logit at every position), on the synthetic checkpoints: prefill, decode
// and extend across the sliding windows, thread pools of 1-4, tiny GEMV
// chunks, small GEMM tiles and attention row blocks, every available ISA,
// other batch splits, and the activation trace. A negative control shows
// that the comparison catches an order change.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/kernels/test_only_table.h"
#include "engine/model/forward.h"
#include "engine/model/profile.h"
#include "engine/model/synthetic.h"
#include "engine/numerics/math.h"
#include "engine/threads/thread_pool.h"

namespace samebits::model {
namespace {

// A token sequence and how it is fed: chunk sizes in order (the first is the
// prefill, 1 is a decode step, larger ones after it are extends).
struct Script {
  std::vector<int32_t> tokens;
  std::vector<int> chunks;
};

// Returns `n` token ids below `vocab` from splitmix64 seeded with `seed`
// (the ids are fixed, not sampled, so both paths always see the same input).
std::vector<int32_t> SeededTokens(int n, int vocab, uint64_t seed) {
  std::vector<int32_t> out;
  uint64_t state = seed;
  for (int i = 0; i < n; ++i) {
    state += 0x9e3779b97f4a7c15ULL;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    out.push_back(static_cast<int32_t>(z % static_cast<uint64_t>(vocab)));
  }
  return out;
}

// Returns a script of prefill `p`, `d1` decodes, an extend of `e`, `d2` decodes.
Script MakeScript(int vocab, int p, int d1, int e, int d2, uint64_t seed) {
  Script s;
  s.chunks.push_back(p);
  for (int i = 0; i < d1; ++i) s.chunks.push_back(1);
  s.chunks.push_back(e);
  for (int i = 0; i < d2; ++i) s.chunks.push_back(1);
  int total = 0;
  for (int c : s.chunks) total += c;
  s.tokens = SeededTokens(total, vocab, seed);
  return s;
}

// Returns the logits of every position, in order, feeding the script's
// chunks with all_positions set.
std::vector<float> RunScript(Forward& forward, const ModelConfig& config, const Script& script,
                             const std::vector<int>& chunks) {
  InferenceState state = MakeState(config);
  std::vector<float> all, logits;
  size_t at = 0;
  for (int c : chunks) {
    forward.Run(state, std::span<const int32_t>(script.tokens.data() + at, c), true, logits,
                nullptr);
    all.insert(all.end(), logits.begin(), logits.end());
    at += c;
  }
  EXPECT_EQ(at, script.tokens.size());
  return all;
}

// Returns true when `a` and `b` hold the same bits; on a difference, says
// where the first one is.
::testing::AssertionResult SameBits(const std::vector<float>& a, const std::vector<float>& b,
                                    int vocab) {
  if (a.size() != b.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << a.size() << " vs " << b.size();
  }
  if (std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0) {
    return ::testing::AssertionSuccess();
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i])) {
      return ::testing::AssertionFailure()
             << "first difference at position " << i / vocab << ", logit " << i % vocab << ": "
             << a[i] << " vs " << b[i];
    }
  }
  return ::testing::AssertionFailure() << "memcmp differs";
}

struct Variant {
  std::string label;
  int threads;
  CpuOptions options;
};

// Returns the configurations compared with the reference.
std::vector<Variant> Variants(bool all_isas) {
  std::vector<Variant> out;
  const kernels::Isa best = kernels::BestIsa();
  for (int threads : {1, 2, 3, 4}) {
    CpuOptions o;
    o.isa = best;
    out.push_back({"threads " + std::to_string(threads), threads, o});
  }
  CpuOptions tiny;
  tiny.isa = best;
  tiny.gemv_chunk_bytes = 8192;
  tiny.gemm_tile_m = 3;
  tiny.gemm_tile_n = 5;
  tiny.attention_row_block = 1;
  out.push_back({"3 threads, 8 KiB chunks, 3x5 tiles, row block 1", 3, tiny});
  CpuOptions odd;
  odd.isa = best;
  odd.gemv_chunk_bytes = 1;  // one row per unit
  odd.gemm_tile_m = 7;
  odd.gemm_tile_n = 3;
  odd.attention_row_block = 7;
  out.push_back({"2 threads, 1-row chunks, 7x3 tiles, row block 7", 2, odd});
  if (all_isas) {
    for (kernels::Isa isa : kernels::AvailableIsas()) {
      CpuOptions o = tiny;
      o.isa = isa;
      out.push_back({std::string("2 threads, 8 KiB chunks, isa ") + kernels::IsaName(isa), 2, o});
    }
  }
  return out;
}

const numerics::MathLibrary& Portable() {
  return numerics::GetMathLibrary(numerics::MathProfile::kPortable);
}

// Returns the cpu pass on `pool` with the best ISA and the default knobs.
std::unique_ptr<Forward> BestCpuForward(const ModelWeights& w, threads::ThreadPool& pool) {
  CpuOptions options;
  options.isa = kernels::BestIsa();
  return MakeCpuForward(w, Portable(), pool, options);
}

// Compares every variant (and other batch splits) with the reference.
void CheckCheckpoint(const ModelWeights& weights, const Script& script, bool all_isas) {
  const ModelConfig& config = weights.config;
  auto reference = MakeReferenceForward(weights, Portable());
  const std::vector<float> want = RunScript(*reference, config, script, script.chunks);
  ASSERT_EQ(want.size(), script.tokens.size() * config.vocab_size);

  for (const Variant& v : Variants(all_isas)) {
    SCOPED_TRACE(config.name + ": " + v.label);
    threads::ThreadPool pool(v.threads);
    auto cpu = MakeCpuForward(weights, Portable(), pool, v.options);
    EXPECT_TRUE(SameBits(want, RunScript(*cpu, config, script, script.chunks), config.vocab_size));
  }

  // Other batch splits of the same tokens: one at a time, and uneven chunks.
  threads::ThreadPool pool(2);
  auto cpu = BestCpuForward(weights, pool);
  const std::vector<int> singles(script.tokens.size(), 1);
  EXPECT_TRUE(SameBits(want, RunScript(*cpu, config, script, singles), config.vocab_size))
      << config.name << ": one token at a time";
  std::vector<int> uneven;
  for (int left = static_cast<int>(script.tokens.size()), c = 2; left > 0; c = c % 5 + 2) {
    uneven.push_back(std::min(c, left));
    left -= uneven.back();
  }
  EXPECT_TRUE(SameBits(want, RunScript(*cpu, config, script, uneven), config.vocab_size))
      << config.name << ": uneven chunks";
}

TEST(ForwardCpu, TinyMatchesReferenceBitForBit) {
  // 27 positions cross the first layer's 8-position window several times.
  const ModelWeights w = MakeSyntheticWeights("tiny", DType::kBF16);
  CheckCheckpoint(w, MakeScript(w.config.vocab_size, 11, 6, 7, 3, 0x71e5), true);
}

TEST(ForwardCpu, TinyF16AndF32MatchReference) {
  for (DType dtype : {DType::kF16, DType::kF32}) {
    const ModelWeights w = MakeSyntheticWeights("tiny", dtype);
    CheckCheckpoint(w, MakeScript(w.config.vocab_size, 9, 2, 5, 2, 0xf16), false);
  }
}

TEST(ForwardCpu, MediumMatchesReferenceAcrossItsWindow) {
  // Parallel blocks, LayerNorm, dense and MoE layers, a no-RoPE global
  // layer, tied output and a logit scale; 76 positions cross the 64 window.
  const ModelWeights w = MakeSyntheticWeights("medium", DType::kBF16);
  CheckCheckpoint(w, MakeScript(w.config.vocab_size, 60, 4, 9, 3, 0x3ed), true);
}

TEST(ForwardCpu, GemmaMatchesReferenceAcrossItsWindow) {
  // Soft-caps, post-norms, GeGLU, the embedding scale, q/k norm, RoPE
  // factors and local/global bases; window 8 on layers 0 and 2. A prefill of
  // 11 (longer than the window), decodes past it, an extend of 9 across it,
  // and (in CheckCheckpoint) single tokens and uneven chunks straddling it.
  for (DType dtype : {DType::kBF16, DType::kF32}) {
    const ModelWeights w = MakeSyntheticWeights("gemma", dtype);
    CheckCheckpoint(w, MakeScript(w.config.vocab_size, 11, 3, 9, 4, 0x9e3), dtype == DType::kBF16);
  }
}

TEST(ForwardCpu, WideMatchesReference) {
  // The bench model's widths (d 1024, 16/4 heads of 64, 8 experts of 1024,
  // vocabulary 32000) in two layers: decode projections are several row
  // chunks and prefill reaches several GEMM tiles.
  const ModelWeights w = MakeSyntheticWeights("wide", DType::kBF16);
  CheckCheckpoint(w, MakeScript(w.config.vocab_size, 9, 2, 5, 1, 0x31de), false);
}

TEST(ForwardCpu, LastPositionOnlyMatchesAllPositions) {
  const ModelWeights w = MakeSyntheticWeights("medium", DType::kBF16);
  const Script s = MakeScript(w.config.vocab_size, 13, 0, 6, 0, 0x1a57);
  threads::ThreadPool pool(2);
  auto cpu = BestCpuForward(w, pool);
  auto reference = MakeReferenceForward(w, Portable());
  for (Forward* f : {cpu.get(), reference.get()}) {
    InferenceState state = MakeState(w.config);
    std::vector<float> all, last;
    f->Run(state, std::span<const int32_t>(s.tokens.data(), 13), false, last, nullptr);
    ASSERT_EQ(last.size(), static_cast<size_t>(w.config.vocab_size));
    InferenceState state2 = MakeState(w.config);
    f->Run(state2, std::span<const int32_t>(s.tokens.data(), 13), true, all, nullptr);
    EXPECT_EQ(0, std::memcmp(last.data(), all.data() + size_t{12} * w.config.vocab_size,
                             last.size() * sizeof(float)));
  }
}

// Collects trace records as (layer, op, position) -> the row's bits.
class CollectingSink : public TraceSink {
 public:
  void Record(int layer, const char* op, int position, const float* data, int64_t n) override {
    keys.push_back(std::to_string(position) + "/" + std::to_string(layer) + "/" + op);
    rows.emplace_back(data, data + n);
  }
  std::vector<std::string> keys;
  std::vector<std::vector<float>> rows;
};

TEST(ForwardCpu, TraceMatchesReferenceRecordForRecord) {
  for (const char* name : {"tiny", "gemma", "medium"}) {
    const ModelWeights w = MakeSyntheticWeights(name, DType::kBF16);
    const Script s = MakeScript(w.config.vocab_size, 10, 2, 4, 1, 0x7ace);
    threads::ThreadPool pool(3);
    CpuOptions options;
    options.isa = kernels::BestIsa();
    options.gemm_tile_m = 3;
    options.attention_row_block = 3;
    auto cpu = MakeCpuForward(w, Portable(), pool, options);
    auto reference = MakeReferenceForward(w, Portable());
    CollectingSink want, got;
    for (auto [f, sink] : {std::pair<Forward*, CollectingSink*>{reference.get(), &want},
                           std::pair<Forward*, CollectingSink*>{cpu.get(), &got}}) {
      InferenceState state = MakeState(w.config);
      std::vector<float> logits;
      size_t at = 0;
      for (int c : s.chunks) {
        f->Run(state, std::span<const int32_t>(s.tokens.data() + at, c), false, logits, sink);
        at += c;
      }
    }
    ASSERT_EQ(want.keys, got.keys) << name;
    for (size_t i = 0; i < want.rows.size(); ++i) {
      ASSERT_EQ(want.rows[i].size(), got.rows[i].size()) << want.keys[i];
      EXPECT_EQ(0, std::memcmp(want.rows[i].data(), got.rows[i].data(),
                               want.rows[i].size() * sizeof(float)))
          << name << ": trace record " << want.keys[i];
    }
  }
}

TEST(ForwardCpu, ProfilerReportsOnlyWhenAskedAndChangesNothing) {
  const ModelWeights w = MakeSyntheticWeights("tiny", DType::kBF16);
  const Script s = MakeScript(w.config.vocab_size, 8, 3, 4, 1, 0x9f);
  threads::ThreadPool pool(2);
  CpuOptions plain;
  plain.isa = kernels::BestIsa();
  CpuOptions profiled = plain;
  profiled.profile = true;
  auto a = MakeCpuForward(w, Portable(), pool, plain);
  auto b = MakeCpuForward(w, Portable(), pool, profiled);
  EXPECT_TRUE(SameBits(RunScript(*a, w.config, s, s.chunks), RunScript(*b, w.config, s, s.chunks),
                       w.config.vocab_size));
  EXPECT_EQ(a->ProfileReport(), "");
  const std::string report = b->ProfileReport();
  EXPECT_NE(report.find("prefill"), std::string::npos) << report;
  EXPECT_NE(report.find("decode"), std::string::npos) << report;
  EXPECT_NE(report.find("attention"), std::string::npos) << report;
  // The passes' wall time, and what of it no op holds.
  EXPECT_NE(report.find("ms in the passes"), std::string::npos) << report;
  EXPECT_NE(report.find("(between the timed ops)"), std::string::npos) << report;
}

// Room reserved ahead (what `bench` gives each run's copy of its context)
// keeps every cached bit, is used by the decode steps that follow (no cache
// moves), and changes no logit.
TEST(ForwardCpu, ReservedCacheRoomKeepsTheBitsAndIsUsed) {
  const ModelWeights w = MakeSyntheticWeights("tiny", DType::kBF16);
  const Script s = MakeScript(w.config.vocab_size, 9, 0, 1, 0, 0x5e);
  threads::ThreadPool pool(2);
  auto cpu = BestCpuForward(w, pool);
  InferenceState context = MakeState(w.config);
  std::vector<float> logits;
  cpu->Run(context, std::span<const int32_t>(s.tokens.data(), 9), false, logits, nullptr);

  constexpr int kSteps = 100;  // 109 positions of tiny's 128
  InferenceState plain = context;
  InferenceState reserved = context;
  ReserveCachePositions(w.config, reserved, context.n_past + kSteps);
  const size_t need =
      static_cast<size_t>(context.n_past + kSteps) * w.config.n_kv_heads * w.config.head_dim;
  std::vector<const float*> where;
  for (auto* caches : {&reserved.k_cache, &reserved.v_cache}) {
    for (size_t l = 0; l < caches->size(); ++l) {
      const std::vector<float>& was =
          (caches == &reserved.k_cache ? context.k_cache : context.v_cache)[l];
      ASSERT_GE((*caches)[l].capacity(), need) << "layer " << l;
      ASSERT_EQ((*caches)[l].size(), was.size());
      EXPECT_EQ(0, std::memcmp((*caches)[l].data(), was.data(), was.size() * sizeof(float)));
      where.push_back((*caches)[l].data());
    }
  }
  EXPECT_EQ(reserved.n_past, context.n_past);

  std::vector<float> from_plain, from_reserved;
  int32_t token = s.tokens[9];
  for (int step = 0; step < kSteps; ++step) {
    cpu->Run(plain, std::span<const int32_t>(&token, 1), false, from_plain, nullptr);
    cpu->Run(reserved, std::span<const int32_t>(&token, 1), false, from_reserved, nullptr);
    ASSERT_TRUE(SameBits(from_plain, from_reserved, w.config.vocab_size)) << "step " << step;
    token = static_cast<int32_t>(step * 7919 % w.config.vocab_size);
  }
  size_t i = 0;
  for (auto* caches : {&reserved.k_cache, &reserved.v_cache}) {
    for (const std::vector<float>& cache : *caches) {
      EXPECT_EQ(cache.data(), where[i++]) << "a cache with room was moved";
    }
  }
}

TEST(ForwardCpu, RejectsBadTokensAndOverlongContexts) {
  const ModelWeights w = MakeSyntheticWeights("tiny", DType::kBF16);
  threads::ThreadPool pool(1);
  auto cpu = MakeCpuForward(w, Portable(), pool, CpuOptions{});
  InferenceState state = MakeState(w.config);
  std::vector<float> logits;
  const std::vector<int32_t> bad = {1, w.config.vocab_size};
  EXPECT_THROW(cpu->Run(state, bad, false, logits, nullptr), std::invalid_argument);
  const std::vector<int32_t> negative = {-1};
  EXPECT_THROW(cpu->Run(state, negative, false, logits, nullptr), std::invalid_argument);
  const std::vector<int32_t> too_long(w.config.max_seq_len + 1, 1);
  EXPECT_THROW(cpu->Run(state, too_long, false, logits, nullptr), std::invalid_argument);
  InferenceState wrong = MakeState(w.config);
  wrong.n_past = 3;  // a cache that does not hold 3 positions
  const std::vector<int32_t> one = {1};
  EXPECT_THROW(cpu->Run(wrong, one, false, logits, nullptr), std::invalid_argument);
}

// Both passes check their inputs with one function (CheckRunInputs); this
// pins that they refuse the same inputs with the same message and leave a
// state they refuse unchanged.
TEST(ForwardCpu, ReferenceRejectsTheSameInputsWithTheSameMessage) {
  const ModelWeights w = MakeSyntheticWeights("tiny", DType::kBF16);
  threads::ThreadPool pool(1);
  auto cpu = MakeCpuForward(w, Portable(), pool, CpuOptions{});
  auto reference = MakeReferenceForward(w, Portable());
  // Returns the message Run throws for `tokens` from `state`, or "" when it
  // does not throw.
  auto message = [](Forward& f, InferenceState state, const std::vector<int32_t>& tokens) {
    std::vector<float> logits;
    try {
      f.Run(state, tokens, false, logits, nullptr);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  InferenceState wrong = MakeState(w.config);
  wrong.n_past = 3;  // a cache that does not hold 3 positions
  const std::vector<std::pair<InferenceState, std::vector<int32_t>>> cases = {
      {MakeState(w.config), {1, w.config.vocab_size}},
      {MakeState(w.config), {-1}},
      {MakeState(w.config), std::vector<int32_t>(w.config.max_seq_len + 1, 1)},
      {wrong, {1}},
  };
  for (const auto& [state, tokens] : cases) {
    const std::string from_cpu = message(*cpu, state, tokens);
    EXPECT_NE(from_cpu, "");
    EXPECT_EQ(message(*reference, state, tokens), from_cpu);
  }
  EXPECT_EQ(message(*reference, MakeState(w.config), {1}), "");
}

TEST(ForwardCpu, WeightBytesPerDecodedTokenCountsTopKExpertsOnly) {
  // synthetic:tiny in BF16, counted by hand: embedding row 64 x 2; per layer
  // norms (attn, ffn) 2 x 64 x 4, q/k norms 2 x 16 x 4, wq and wo 2 x 64 x 64
  // x 2, wk and wv 2 x 32 x 64 x 2, router 4 x 64 x 4, shared expert 3 x 32 x
  // 64 x 2, top-2 of the 4 experts 2 x 3 x 64 x 64 x 2; output norm 64 x 4
  // and output 256 x 64 x 2.
  const ModelWeights w = MakeSyntheticWeights("tiny", DType::kBF16);
  const int64_t layer = 512 + 128 + 16384 + 8192 + 1024 + 12288 + 49152;
  EXPECT_EQ(WeightBytesPerDecodedToken(w), 128 + 2 * layer + 256 + 32768);
}

// The negative control: the test-only table sums attention's V in reverse,
// an order the contract forbids, and the comparison above must see it.
TEST(ForwardCpu, NegativeControlAnOrderChangeIsCaught) {
  const ModelWeights w = MakeSyntheticWeights("tiny", DType::kBF16);
  const Script s = MakeScript(w.config.vocab_size, 11, 6, 7, 3, 0x71e5);
  auto reference = MakeReferenceForward(w, Portable());
  const std::vector<float> want = RunScript(*reference, w.config, s, s.chunks);
  threads::ThreadPool pool(2);
  CpuOptions options;
  options.isa = kernels::BestIsa();
  auto broken = MakeCpuForward(w, Portable(), pool, options,
                               kernels::TestOnlyReversedAttentionTable(options.isa));
  EXPECT_FALSE(SameBits(want, RunScript(*broken, w.config, s, s.chunks), w.config.vocab_size));
  auto fine = MakeCpuForward(w, Portable(), pool, options);
  EXPECT_TRUE(SameBits(want, RunScript(*fine, w.config, s, s.chunks), w.config.vocab_size));
}

}  // namespace
}  // namespace samebits::model
