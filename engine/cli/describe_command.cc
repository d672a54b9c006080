// `samebits-engine describe`: a checkpoint's shape, per-layer summary,
// parameter count and weights hash, for a person or (--json) for a script.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "engine/cli/commands.h"
#include "engine/formats/checkpoint.h"
#include "engine/model/tensor_spec.h"

namespace samebits::cli {
namespace {

const char* NormName(model::NormKind norm) {
  return norm == model::NormKind::kRmsNorm ? "rmsnorm" : "layernorm";
}
const char* RopeName(model::RopeStyle style) {
  return style == model::RopeStyle::kInterleaved ? "interleaved" : "neox";
}

nlohmann::ordered_json ToJson(const model::ModelWeights& w, const std::string& spec) {
  const model::ModelConfig& c = w.config;
  nlohmann::ordered_json j;
  j["spec"] = spec;
  j["name"] = c.name;
  j["arch"] = c.arch;
  j["vocab_size"] = c.vocab_size;
  j["d_model"] = c.d_model;
  j["n_heads"] = c.n_heads;
  j["n_kv_heads"] = c.n_kv_heads;
  j["head_dim"] = c.head_dim;
  j["norm"] = NormName(c.norm);
  j["norm_eps"] = c.norm_eps;
  j["rope_style"] = RopeName(c.rope_style);
  j["rope_base"] = c.rope_base;
  j["rope_dim"] = c.rotary_dim();
  j["qk_norm"] = c.qk_norm;
  j["parallel_block"] = c.parallel_block;
  j["ffn_dim"] = c.ffn_dim;
  j["n_experts"] = c.n_experts;
  j["top_k"] = c.top_k;
  j["expert_ffn_dim"] = c.expert_ffn_dim;
  j["renormalize_top_k"] = c.renormalize_top_k;
  j["shared_expert_ffn_dim"] = c.shared_expert_ffn_dim;
  j["tied_output"] = c.tied_output;
  j["logit_scale"] = c.logit_scale;
  j["max_seq_len"] = c.max_seq_len;
  j["weight_dtype"] = numerics::DTypeName(w.token_embedding.dtype);
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const model::LayerConfig& l : c.layers) {
    layers.push_back({{"sliding_window", l.sliding_window}, {"rope", l.use_rope}, {"moe", l.moe}});
  }
  j["layers"] = layers;
  j["parameters"] = model::CountParameters(w);
  j["weights_xxh3"] = model::HashWeights(w);
  return j;
}

std::string ToText(const model::ModelWeights& w, const std::string& spec) {
  const model::ModelConfig& c = w.config;
  std::ostringstream out;
  out << "checkpoint " << spec << " (" << c.name << ", arch " << c.arch << ", weights "
      << numerics::DTypeName(w.token_embedding.dtype) << ")\n";
  out << "  vocab " << c.vocab_size << ", d_model " << c.d_model << ", heads " << c.n_heads
      << " (kv " << c.n_kv_heads << ") x head_dim " << c.head_dim << ", max_seq_len "
      << c.max_seq_len << "\n";
  out << "  norm " << NormName(c.norm) << " eps " << c.norm_eps << ", rope "
      << RopeName(c.rope_style) << " base " << c.rope_base << " dim " << c.rotary_dim()
      << (c.qk_norm ? ", qk norm" : "") << (c.parallel_block ? ", parallel blocks" : "") << "\n";
  out << "  ffn " << c.ffn_dim;
  if (c.n_experts > 0) {
    out << "; experts " << c.n_experts << " top-" << c.top_k << " x ffn " << c.expert_ffn_dim
        << (c.renormalize_top_k ? " (renormalized)" : "");
    if (c.shared_expert_ffn_dim > 0) out << ", shared expert ffn " << c.shared_expert_ffn_dim;
  }
  out << "\n  output " << (c.tied_output ? "tied to the embedding" : "separate") << ", logit scale "
      << c.logit_scale << "\n";
  for (int i = 0; i < c.n_layers(); ++i) {
    const model::LayerConfig& l = c.layers[static_cast<size_t>(i)];
    out << "  layer " << i << ": "
        << (l.sliding_window > 0 ? "window " + std::to_string(l.sliding_window) : "global")
        << (l.use_rope ? ", rope" : ", no rope") << (l.moe ? ", moe" : ", dense") << "\n";
  }
  out << "  parameters " << model::CountParameters(w) << "\n";
  out << "  weights xxh3 " << model::HashWeights(w) << "\n";
  return out.str();
}

struct DescribeOptions {
  std::string spec;
  bool json = false;
};

int RunDescribe(const DescribeOptions& options) {
  const model::ModelWeights weights = LoadCheckpointForCommand(options.spec);
  const std::string text =
      options.json ? ToJson(weights, options.spec).dump(2) + "\n" : ToText(weights, options.spec);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

CommandSpec SetupDescribe(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "describe", "Prints a checkpoint's shape, layers, parameter count and weights hash.");
  auto options = std::make_shared<DescribeOptions>();
  sub->add_option("checkpoint", options->spec,
                  "The checkpoint to describe: synthetic:NAME[-DTYPE], gguf:PATH, "
                  "safetensors:DIR, llama2c:PATH or a path.")
      ->option_text("CHECKPOINT")
      ->required();
  sub->add_flag("--json", options->json, "Print one JSON object instead of text.");
  return {sub, [options] { return RunDescribe(*options); }};
}

}  // namespace
SAMEBITS_REGISTER_COMMAND(describe, 20, SetupDescribe);
}  // namespace samebits::cli
