#include "engine/formats/hf_names.h"

#include <cstdlib>
#include <utility>

namespace samebits::formats {
namespace {

// One row per layer tensor: HF suffix after "model.layers.N.", engine suffix after "blk.N.".
constexpr std::pair<const char*, const char*> kLayerNames[] = {
    {"input_layernorm.weight", "attn_norm.weight"},
    {"input_layernorm.bias", "attn_norm.bias"},
    {"post_attention_layernorm.weight", "ffn_norm.weight"},
    {"post_attention_layernorm.bias", "ffn_norm.bias"},
    {"self_attn.q_proj.weight", "attn_q.weight"},
    {"self_attn.k_proj.weight", "attn_k.weight"},
    {"self_attn.v_proj.weight", "attn_v.weight"},
    {"self_attn.o_proj.weight", "attn_output.weight"},
    {"self_attn.q_norm.weight", "attn_q_norm.weight"},
    {"self_attn.k_norm.weight", "attn_k_norm.weight"},
    {"mlp.gate_proj.weight", "ffn_gate.weight"},
    {"mlp.up_proj.weight", "ffn_up.weight"},
    {"mlp.down_proj.weight", "ffn_down.weight"},
    {"block_sparse_moe.gate.weight", "ffn_gate_inp.weight"},
    {"mlp.gate.weight", "ffn_gate_inp.weight"},
    {"mlp.shared_expert.gate_proj.weight", "ffn_gate_shexp.weight"},
    {"mlp.shared_expert.up_proj.weight", "ffn_up_shexp.weight"},
    {"mlp.shared_expert.down_proj.weight", "ffn_down_shexp.weight"},
};

// Rows that differ from kLayerNames in one family, looked up first.
struct FamilyName {
  HfFamily family;
  const char* hf;
  const char* gguf;
};
constexpr FamilyName kFamilyNames[] = {
    {HfFamily::kGemma, "post_attention_layernorm.weight", "post_attention_norm.weight"},
    {HfFamily::kGemma, "pre_feedforward_layernorm.weight", "ffn_norm.weight"},
    {HfFamily::kGemma, "post_feedforward_layernorm.weight", "post_ffw_norm.weight"},
    {HfFamily::kPhi3, "self_attn.qkv_proj.weight", "attn_qkv.weight"},
    {HfFamily::kPhi3, "mlp.gate_up_proj.weight", "ffn_up.weight"},
};

// Expert projections: Mixtral's w1/w3/w2 and Qwen's gate/up/down.
constexpr std::pair<const char*, const char*> kExpertNames[] = {
    {"block_sparse_moe.experts.%.w1.weight", "ffn_gate"},
    {"block_sparse_moe.experts.%.w3.weight", "ffn_up"},
    {"block_sparse_moe.experts.%.w2.weight", "ffn_down"},
    {"mlp.experts.%.gate_proj.weight", "ffn_gate"},
    {"mlp.experts.%.up_proj.weight", "ffn_up"},
    {"mlp.experts.%.down_proj.weight", "ffn_down"},
};

// Returns the decimal number at the start of `s` (its length in `*len`), or -1.
long LeadingNumber(const std::string& s, size_t* len) {
  size_t i = 0;
  while (i < s.size() && i < 9 && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == 0 || (i > 1 && s[0] == '0')) return -1;
  *len = i;
  return std::strtol(s.substr(0, i).c_str(), nullptr, 10);
}

// Matches `s` against `pattern` where '%' stands for a number; sets *n.
bool MatchNumbered(const std::string& s, const std::string& pattern, long* n) {
  const size_t pct = pattern.find('%');
  if (s.compare(0, pct, pattern, 0, pct) != 0) return false;
  size_t len = 0;
  *n = LeadingNumber(s.substr(pct), &len);
  if (*n < 0) return false;
  return s.substr(pct + len) == pattern.substr(pct + 1);
}

}  // namespace

std::string GgufNameFromHf(const std::string& hf, HfFamily family) {
  if (hf == "model.embed_tokens.weight") return "token_embd.weight";
  if (hf == "model.norm.weight") return "output_norm.weight";
  if (hf == "model.norm.bias") return "output_norm.bias";
  if (hf == "lm_head.weight") return "output.weight";
  if (hf.rfind("samebits.", 0) == 0) return hf.substr(9);
  long layer = 0;
  const std::string prefix = "model.layers.";
  if (hf.rfind(prefix, 0) != 0) return {};
  size_t len = 0;
  layer = LeadingNumber(hf.substr(prefix.size()), &len);
  if (layer < 0 || hf.size() <= prefix.size() + len || hf[prefix.size() + len] != '.') return {};
  const std::string rest = hf.substr(prefix.size() + len + 1);
  const std::string blk = "blk." + std::to_string(layer) + ".";
  for (const FamilyName& f : kFamilyNames) {
    if (f.family == family && rest == f.hf) return blk + f.gguf;
  }
  for (const auto& [h, g] : kLayerNames) {
    if (rest == h) return blk + g;
  }
  for (const auto& [h, g] : kExpertNames) {
    long e = 0;
    if (MatchNumbered(rest, h, &e)) return blk + g + "." + std::to_string(e) + ".weight";
  }
  return {};
}

std::string HfNameFromGguf(const std::string& name, HfFamily family, int expert) {
  if (name == "token_embd.weight") return "model.embed_tokens.weight";
  if (name == "output_norm.weight") return "model.norm.weight";
  if (name == "output_norm.bias") return "model.norm.bias";
  if (name == "output.weight") return "lm_head.weight";
  size_t len = 0;
  const long layer = name.rfind("blk.", 0) == 0 ? LeadingNumber(name.substr(4), &len) : -1;
  if (layer >= 0) {
    const std::string rest = name.substr(4 + len + 1);
    const std::string pre = "model.layers." + std::to_string(layer) + ".";
    if (expert >= 0) {
      const bool mixtral = family == HfFamily::kMixtral;
      const std::string base = rest.substr(0, rest.find("_exps"));
      for (const auto& [h, g] : kExpertNames) {
        const bool is_mixtral_row = std::string(h).rfind("block_sparse_moe", 0) == 0;
        if (is_mixtral_row == mixtral && base == g) {
          std::string hn = h;
          hn.replace(hn.find('%'), 1, std::to_string(expert));
          return pre + hn;
        }
      }
    } else {
      for (const FamilyName& f : kFamilyNames) {
        if (f.family == family && rest == f.gguf) return pre + f.hf;
      }
      for (const auto& [h, g] : kLayerNames) {
        if (rest != g) continue;
        const bool mixtral_router = std::string(h) == "block_sparse_moe.gate.weight";
        if (rest == "ffn_gate_inp.weight" && mixtral_router != (family == HfFamily::kMixtral))
          continue;
        return pre + h;
      }
    }
  }
  return "samebits." + name;
}

}  // namespace samebits::formats
