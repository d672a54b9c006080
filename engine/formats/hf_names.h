// Tensor names of the Hugging Face layout <-> the engine's GGUF-convention
// names. Per-expert HF tensors map to `blk.N.ffn_gate.E.weight` (the
// per-expert GGUF form), which the binder gathers into 3-D expert tensors.
#pragma once

#include <string>

namespace samebits::formats {

// The tensor naming (and MoE keys) of a transformers class; which class has
// which family is architectures.h's table. Gemma (2 and 3) names its four
// norms per layer `input_layernorm`, `post_attention_layernorm` (after
// attention, before the residual), `pre_feedforward_layernorm` and
// `post_feedforward_layernorm`; Phi-3 fuses q/k/v into `self_attn.qkv_proj`
// and gate/up into `mlp.gate_up_proj` (the engine's fused `attn_qkv` and
// `ffn_up`, which the binder splits).
enum class HfFamily { kLlama, kMixtral, kQwen3Moe, kGemma, kPhi3 };

// Returns the engine name of HF tensor `hf` in `family`'s naming ("" when
// it is unknown). Names `samebits.X` (our writer's, for tensors HF has no
// name for) map to X.
std::string GgufNameFromHf(const std::string& hf, HfFamily family);

// Returns the HF name of engine tensor `name` in `family`'s naming; for an
// expert tensor (`..._exps.weight`), that of expert `expert`.
std::string HfNameFromGguf(const std::string& name, HfFamily family, int expert);

}  // namespace samebits::formats
