// `samebits-engine export SPEC OUT`: writes any checkpoint (synthetic ones
// included) as GGUF v3 (OUT ending in .gguf) or as a safetensors directory
// with config.json (any other OUT), so that other engines can run the very
// weights whose hashes samebits records; `--type` requantizes the matrices
// first (q8_0 ... q6_k, f32, f16, bf16). Safetensors has no block types: a
// quantized checkpoint is written there as its dequantized F32 values; it
// is written as the model's transformers class (formats/safetensors.h).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engine/cli/commands.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/gguf_writer.h"
#include "engine/formats/safetensors.h"
#include "engine/model/quantized_weights.h"
#include "engine/model/tensor_spec.h"

namespace samebits::cli {
namespace {

struct ExportOptions {
  std::string spec;
  std::string out;
  std::string format;
  std::string type;
  int shards = 1;
};

// Returns the switches of `c` the chosen writer cannot state, comma
// separated; empty when every one can be written. Writing such a model
// without them would make another model. GGUF states the Gemma 2/3
// operations through its architecture name and keys; safetensors through
// the transformers class of Gemma 2/3, Cohere2 and Phi-3 models, which
// has no form for `rope_freqs` (the Llama, Mixtral and Qwen3-MoE classes
// write it as `rope_scaling`, or WriteSafetensors refuses it).
std::string UnwritableSwitches(const model::ModelConfig& c, bool gguf) {
  return gguf ? formats::GgufUnwritableSwitches(c) : formats::SafetensorsUnwritableSwitches(c);
}

int RunExport(const ExportOptions& options) {
  const std::string& out = options.out;
  model::ModelWeights weights = LoadCheckpointForCommand(options.spec);

  if (!options.type.empty()) {
    model::WeightType type;
    model::ParseWeightType(options.type, &type);
    std::vector<std::string> notes;
    weights = model::ConvertWeights(weights, type, &notes);
    for (const std::string& n : notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  }
  const bool gguf = options.format.empty()
                        ? out.size() >= 5 && out.compare(out.size() - 5, 5, ".gguf") == 0
                        : options.format == "gguf";
  if (const std::string unwritable = UnwritableSwitches(weights.config, gguf);
      !unwritable.empty()) {
    throw UsageError("export: " + weights.config.name + " uses " + unwritable + ", which the " +
                     (gguf ? std::string("GGUF") : std::string("safetensors")) +
                     " writer does not write (for this architecture) yet; exporting it would "
                     "describe a different model, so nothing was written");
  }
  if (gguf) {
    formats::WriteGguf(weights, out);
  } else {
    formats::WriteSafetensors(weights, out, options.shards);
  }
  std::fprintf(stderr, "wrote %s (%s, %lld parameters, weights %s)\n", out.c_str(),
               gguf ? "GGUF v3" : "safetensors",
               static_cast<long long>(model::CountParameters(weights)),
               model::HashWeights(weights).c_str());
  return 0;
}

CommandSpec SetupExport(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "export", "Writes a checkpoint as GGUF v3 or safetensors (for other engines).");
  auto options = std::make_shared<ExportOptions>();
  sub->add_option("checkpoint", options->spec,
                  "The checkpoint to export: synthetic:NAME[-DTYPE], gguf:PATH, safetensors:DIR, "
                  "llama2c:PATH or a path.")
      ->option_text("SPEC")
      ->required();
  sub->add_option("output", options->out,
                  "Where to write: a path ending in .gguf writes GGUF v3; any other path is a "
                  "directory that receives config.json and model.safetensors, under the names "
                  "and keys of the model's transformers class (Gemma2ForCausalLM, "
                  "Gemma3ForCausalLM, Cohere2ForCausalLM, Phi3ForCausalLM, MixtralForCausalLM, "
                  "Qwen3MoeForCausalLM, else LlamaForCausalLM). A switch the format cannot state "
                  "(e.g. rope_freqs in Gemma's class, or divisors that are not Llama 3.1's "
                  "rope_scaling) is refused, naming it.")
      ->option_text("OUT")
      ->required();
  sub->add_option("--format", options->format,
                  "The output format, when the path does not say: gguf or safetensors.")
      ->option_text("FORMAT")
      ->check(CLI::IsMember({"gguf", "safetensors"}));
  sub->add_option("--type", options->type,
                  "Store every matrix and the token embedding as TYPE: a ggml block type, "
                  "quantized by ggml's reference quantizers (no importance matrix, as "
                  "llama-quantize without --imatrix), or a plain dtype rounded to nearest even. "
                  "Norms, biases and the MoE router keep their type, as llama-quantize keeps "
                  "them F32. Rows that fit no k-quant block fall back to Q5_0/Q5_1/Q8_0 as "
                  "llama-quantize does (then F16), with a note. Example: --type q4_k.")
      ->option_text(model::WeightTypeChoices())
      ->check([](const std::string& v) {
        model::WeightType t;
        return model::ParseWeightType(v, &t)
                   ? std::string()
                   : "unknown type '" + v + "' (use " + model::WeightTypeChoices() + ")";
      });
  sub->add_option("--shards", options->shards,
                  "Split a safetensors export into this many files with an index.")
      ->option_text("N")
      ->check(CLI::Range(1, 1000));
  return {sub, [options] { return RunExport(*options); }};
}

}  // namespace
SAMEBITS_REGISTER_COMMAND(export, 50, SetupExport);
}  // namespace samebits::cli
