// The model architectures the loaders read, one entry each, written as data
// (gemma.cpp's configs.cc is the model): what a file's architecture name
// sets on `ModelConfig` before the file's own keys are read. An architecture
// built from the engine's existing ops is one entry here (and, when its
// keys differ from llama.cpp's usual ones, a line in the reader that uses
// the new field); one that needs a new op adds the op in engine/model/
// beside its reference step, and the switch that turns it on here.
#pragma once

#include <span>
#include <string>

#include "engine/formats/hf_names.h"
#include "engine/model/config.h"

namespace samebits::formats {

// A GGUF `general.architecture` name and the switches llama.cpp's loader
// implies for it. Files our writer made (`samebits.version`) state every
// switch as a `samebits.*` key, which overrides these.
struct GgufArchitecture {
  const char* name = "";
  // llama.cpp's rope type: NORM rotates adjacent pairs (its converter
  // permuted q and k to match), NEOX rotates halves.
  model::RopeStyle rope_style = model::RopeStyle::kInterleaved;
  bool qk_norm = false;   // RMSNorm of q and k per head
  bool qkv_bias = false;  // biases on q, k and v (`blk.N.attn_{q,k,v}.bias`)
  // Mixtral-style files give the expert width as `{arch}.feed_forward_length`
  // and may omit `{arch}.expert_feed_forward_length`.
  bool expert_width_in_ffn = false;
  // Cohere2: mean-subtracting LayerNorm (`{arch}.attention.layer_norm_epsilon`),
  // attention and FFN in parallel from it, and `{arch}.logit_scale`.
  model::NormKind norm = model::NormKind::kRmsNorm;
  bool parallel_block = false;
  // Gemma 2/3: post-attention and post-FFN norms, GeGLU (GELU, tanh form),
  // embeddings times sqrt(d_model), `{arch}.attn_logit_softcapping` and
  // `{arch}.final_logit_softcapping` when present.
  bool gemma_block = false;
  // llama.cpp's sliding-window pattern when the file names none: with
  // `{arch}.attention.sliding_window` W, layer i slides (window W) unless
  // i % N == N - 1 (global). 0: no pattern (Phi-3's window is ignored, as
  // llama.cpp ignores it).
  int sliding_window_pattern = 0;
  bool global_layers_without_rope = false;  // Cohere2: no RoPE on the global layers
  // Gemma 3: the sliding layers' RoPE base is `{arch}.rope.freq_base_swa`
  // (llama.cpp's default 1e4 when absent).
  bool local_rope_base = false;
  // Phi-3: each dense layer's gate and up projections are one `ffn_up`
  // tensor of twice the FFN width (rows gate, then up); llama.cpp's loader
  // takes no other form. The reader splits such a tensor in any file.
  bool fused_gate_up = false;
};

// Each entry names only what differs from the defaults above.
inline constexpr GgufArchitecture kGgufArchitectures[] = {
    {.name = "llama", .expert_width_in_ffn = true},
    {.name = "qwen2", .rope_style = model::RopeStyle::kNeox, .qkv_bias = true},
    {.name = "qwen3", .rope_style = model::RopeStyle::kNeox, .qk_norm = true},
    {.name = "qwen3moe", .rope_style = model::RopeStyle::kNeox, .qk_norm = true},
    {.name = "gemma2",
     .rope_style = model::RopeStyle::kNeox,
     .gemma_block = true,
     .sliding_window_pattern = 2},
    {.name = "gemma3",
     .rope_style = model::RopeStyle::kNeox,
     .qk_norm = true,
     .gemma_block = true,
     .sliding_window_pattern = 6,
     .local_rope_base = true},
    {.name = "cohere2",
     .norm = model::NormKind::kLayerNorm,
     .parallel_block = true,
     .sliding_window_pattern = 4,
     .global_layers_without_rope = true},
    {.name = "phi3", .rope_style = model::RopeStyle::kNeox, .fused_gate_up = true},
};

// What an architecture name the table does not know gets, in a file our
// writer made (`samebits.version`): the defaults, every switch then comes
// from the file's `samebits.*` keys. Such a name is refused in other files.
inline constexpr GgufArchitecture kSamebitsOnlyArchitecture = {};

// Returns the entry named `name`, or null.
const GgufArchitecture* FindGgufArchitecture(const std::string& name);

// A transformers `config.json` architecture class and what it implies.
struct HfArchitecture {
  const char* class_name = "";         // `architectures[0]`
  const char* model_type = "";         // written beside it
  HfFamily family = HfFamily::kLlama;  // tensor names and MoE keys (hf_names.h)
  // The GGUF architecture it becomes (`ModelConfig::arch` unless
  // `samebits_arch` is set). The class implies that entry's switches in
  // kGgufArchitectures (q/k norm, LayerNorm, parallel block, the Gemma
  // block, the sliding pattern, Cohere2's global layers without RoPE,
  // Gemma 3's local RoPE base), except the rotary layout below.
  const char* gguf_arch = "llama";
  // transformers rotates halves (`rotate_half`) of unpermuted q/k weights;
  // Cohere's rotary embedding rotates adjacent pairs.
  model::RopeStyle rope_style = model::RopeStyle::kNeox;
  // Its keys state every switch of the models it is written for (issue 25's
  // classes): the writer takes it only for a model whose switches are the
  // class's (SafetensorsUnwritableSwitches), so transformers computes the
  // same model. The other classes carry the rest in `samebits_*` keys.
  bool states_every_switch = false;
  // Gemma's RMSNorm multiplies by (1 + w): the file holds each norm weight
  // minus one (the engine's, like llama.cpp's converter's, plus one).
  bool norm_weight_minus_one = false;
  // Phi-3: `sliding_window` applies to every layer (llama.cpp ignores it).
  bool window_on_every_layer = false;
  float default_rope_theta = 10000.0f;  // transformers' default when `rope_theta` is absent
};

inline constexpr HfArchitecture kHfArchitectures[] = {
    {.class_name = "LlamaForCausalLM", .model_type = "llama"},
    {.class_name = "MixtralForCausalLM", .model_type = "mixtral", .family = HfFamily::kMixtral},
    {.class_name = "Qwen3MoeForCausalLM",
     .model_type = "qwen3_moe",
     .family = HfFamily::kQwen3Moe,
     .gguf_arch = "qwen3moe"},
    {.class_name = "Gemma2ForCausalLM",
     .model_type = "gemma2",
     .family = HfFamily::kGemma,
     .gguf_arch = "gemma2",
     .states_every_switch = true,
     .norm_weight_minus_one = true},
    {.class_name = "Gemma3ForCausalLM",
     .model_type = "gemma3_text",
     .family = HfFamily::kGemma,
     .gguf_arch = "gemma3",
     .states_every_switch = true,
     .norm_weight_minus_one = true,
     .default_rope_theta = 1e6f},
    {.class_name = "Cohere2ForCausalLM",
     .model_type = "cohere2",
     .gguf_arch = "cohere2",
     .rope_style = model::RopeStyle::kInterleaved,
     .states_every_switch = true},
    {.class_name = "Phi3ForCausalLM",
     .model_type = "phi3",
     .family = HfFamily::kPhi3,
     .gguf_arch = "phi3",
     .states_every_switch = true,
     .window_on_every_layer = true},
};

// Returns the entry of class `class_name`, or null.
const HfArchitecture* FindHfArchitecture(const std::string& class_name);
// Returns the entry of `family` (the first, for a family of several classes).
const HfArchitecture& HfArchitectureOf(HfFamily family);
// Returns the GGUF entry of `arch` (`arch.gguf_arch`, which the table keeps known).
const GgufArchitecture& GgufArchitectureOf(const HfArchitecture& arch);

// Returns the names a table knows, comma separated, for error messages.
std::string KnownGgufArchitectures();
std::string KnownHfArchitectures();

}  // namespace samebits::formats
