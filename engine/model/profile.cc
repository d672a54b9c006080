#include "engine/model/profile.h"

#include <cstdio>

namespace samebits::model {

const char* ProfileOpName(ProfileOp op) {
  switch (op) {
    case ProfileOp::kEmbed:
      return "embed";
    case ProfileOp::kNorms:
      return "norms";
    case ProfileOp::kQkv:
      return "qkv";
    case ProfileOp::kRopeKv:
      return "rope+kv append";
    case ProfileOp::kAttention:
      return "attention";
    case ProfileOp::kOProj:
      return "o_proj";
    case ProfileOp::kRouter:
      return "router";
    case ProfileOp::kFfn:
      return "experts/ffn";
    case ProfileOp::kResidual:
      return "residual";
    case ProfileOp::kHead:
      return "head";
    case ProfileOp::kQkvFfnIn:
      return "qkv+router/ffn in (fused)";
    case ProfileOp::kAttentionFfnIn:
      return "attention+experts in (fused)";
    case ProfileOp::kOProjFfnOut:
      return "o_proj+ffn down (fused)";
    case ProfileOp::kCount:
      break;
  }
  return "?";
}

const char* PassKindName(PassKind kind) {
  switch (kind) {
    case PassKind::kPrefill:
      return "prefill";
    case PassKind::kDecode:
      return "decode";
    case PassKind::kExtend:
      return "extend";
    case PassKind::kCount:
      break;
  }
  return "?";
}

void Profiler::Add(PassKind kind, ProfileOp op, int64_t ns) {
  Cell& cell = cells_[static_cast<size_t>(kind)][static_cast<size_t>(op)];
  cell.ns += ns;
  cell.calls += 1;
}

void Profiler::CountPass(PassKind kind, int64_t tokens) {
  passes_[static_cast<size_t>(kind)] += 1;
  tokens_[static_cast<size_t>(kind)] += tokens;
}

void Profiler::AddPassTime(PassKind kind, int64_t ns) {
  pass_ns_[static_cast<size_t>(kind)] += ns;
}

int64_t WeightBytesPerDecodedToken(const ModelWeights& weights) {
  const ModelConfig& c = weights.config;
  const auto bytes = [](const TensorView& t) { return static_cast<int64_t>(t.bytes()); };
  int64_t total = 0;
  if (weights.token_embedding.present() && c.vocab_size > 0) {
    total += bytes(weights.token_embedding) / c.vocab_size;  // one row
  }
  for (size_t l = 0; l < weights.layers.size(); ++l) {
    const LayerWeights& w = weights.layers[l];
    for (const TensorView* t :
         {&w.attn_norm, &w.attn_norm_bias, &w.wq, &w.wk, &w.wv, &w.wo, &w.q_norm, &w.k_norm,
          &w.ffn_norm, &w.ffn_norm_bias, &w.ffn_gate, &w.ffn_up, &w.ffn_down, &w.router,
          &w.shared_gate, &w.shared_up, &w.shared_down}) {
      total += bytes(*t);
    }
    // Expert stacks: only the top_k of n_experts matrices are read.
    if (c.n_experts > 0) {
      for (const TensorView* t : {&w.expert_gate, &w.expert_up, &w.expert_down}) {
        total += bytes(*t) / c.n_experts * c.top_k;
      }
    }
  }
  total += bytes(weights.output_norm) + bytes(weights.output_norm_bias);
  total += bytes(weights.output_projection());
  return total;
}

std::string Profiler::Report() const {
  std::string out;
  char line[200];
  const auto row = [&](const char* name, int64_t ns, int64_t calls, int64_t base_ns,
                       int64_t passes) {
    std::snprintf(line, sizeof line, "  %-30s %12.3f %6.1f%% %9lld %12.4f\n", name, ns / 1e6,
                  100.0 * static_cast<double>(ns) / static_cast<double>(base_ns),
                  static_cast<long long>(calls), ns / 1e6 / passes);
    out += line;
  };
  for (size_t k = 0; k < static_cast<size_t>(PassKind::kCount); ++k) {
    int64_t total_ns = 0;
    for (const Cell& cell : cells_[k]) total_ns += cell.ns;
    if (total_ns == 0) continue;
    const int64_t passes = passes_[k] > 0 ? passes_[k] : 1;
    // The ops are timed inside the passes, so a pass time below their sum
    // only comes from a pass that threw after its ops: fall back to the sum.
    const int64_t wall_ns = pass_ns_[k] >= total_ns ? pass_ns_[k] : 0;
    const int64_t base_ns = wall_ns > 0 ? wall_ns : total_ns;
    std::snprintf(line, sizeof line, "%s: %lld passes, %lld tokens, %.3f ms timed",
                  PassKindName(static_cast<PassKind>(k)), static_cast<long long>(passes_[k]),
                  static_cast<long long>(tokens_[k]), total_ns / 1e6);
    out += line;
    if (wall_ns > 0) {
      std::snprintf(line, sizeof line, " of %.3f ms in the passes", wall_ns / 1e6);
      out += line;
    }
    out += "\n";
    std::snprintf(line, sizeof line, "  %-30s %12s %7s %9s %12s\n", "op", "total ms", "%", "calls",
                  "ms/pass");
    out += line;
    for (size_t op = 0; op < static_cast<size_t>(ProfileOp::kCount); ++op) {
      const Cell& cell = cells_[k][op];
      if (cell.calls == 0) continue;
      row(ProfileOpName(static_cast<ProfileOp>(op)), cell.ns, cell.calls, base_ns, passes);
    }
    if (wall_ns > 0)
      row("(between the timed ops)", wall_ns - total_ns, passes_[k], base_ns, passes);
  }
  return out;
}

}  // namespace samebits::model
